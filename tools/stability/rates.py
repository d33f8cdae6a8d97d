#!/usr/bin/env python3
"""Measure the stability test's rates (docs/report.md §2.1).

For each load rho of M/M/1 (mm1.sq beside this script: Poisson arrivals at
rho, exponential service of mean 1, horizon 20 000, warmup 1 000), run
POINTS points of REPLICATIONS replications each with `serq run
--replications`, point p on the seeds 1 + p*R ... R + p*R (no seed shared
between points), and count the verdicts `steady`, `transient` and
`overloaded`. Then run examples/pd-disaggregation/nixl_pull.sq at its
defaults with --replications 20 and print its verdict.

Slow (about 8 000 runs of 20 000 arrivals; minutes), so not part of the
tests. Usage, from the repository's root after `cargo build --release`:

    python3 tools/stability/rates.py [--serq target/release/serq]
        [--points 200] [--replications 10] [--rho 0.7 --rho 1.05 ...]

The acceptance (issue 40): at rho = 0.7 at most 2% of points flagged
(`stable` false); at rho = 1.05 at least 95% `overloaded`; nixl_pull steady.
"""

import argparse
import collections
import json
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def verdict(serq, program, replications, seed, sets=()):
    """The point's `stability` from `serq run --json --replications`."""
    args = [serq, "run", str(program), "--json", "--replications", str(replications)]
    if seed is not None:
        args += ["--seed", str(seed)]
    for s in sets:
        args += ["--set", s]
    out = subprocess.run(args, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["stability"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--serq", default=str(ROOT / "target/release/serq"))
    p.add_argument("--points", type=int, default=200)
    p.add_argument("--replications", type=int, default=10)
    p.add_argument("--rho", type=float, action="append")
    a = p.parse_args()
    rhos = a.rho or [0.7, 0.9, 0.99, 1.05]
    r = a.replications
    print(f"M/M/1, horizon 20000, warmup 1000, {a.points} points of {r} replications")
    print("rho      steady  transient  overloaded  flagged")
    for rho in rhos:
        counts = collections.Counter(
            verdict(a.serq, HERE / "mm1.sq", r, 1 + k * r, [f"rho={rho}"])
            for k in range(a.points)
        )
        flagged = a.points - counts["steady"]
        print(
            f"{rho:<8} {counts['steady']:>6}  {counts['transient']:>9}  "
            f"{counts['overloaded']:>10}  {100 * flagged / a.points:6.1f}%",
            flush=True,
        )
    nixl = ROOT / "examples/pd-disaggregation/nixl_pull.sq"
    print(f"nixl_pull.sq, defaults, --replications 20: {verdict(a.serq, nixl, 20, None)}")


if __name__ == "__main__":
    sys.exit(main())
