"""A capacity study on Ray: the smallest number of decode instances that
keeps the 99th percentile of the response time under a target at every
arrival rate, for the prefill/decode deployment of
examples/pd-disaggregation/capacity.sq.

Step 1 runs one Ray task per (rate, decoders, replication), each a serq.run
in a worker that returns that run's p99 of `response`; a point meets the
target when the mean p99 of its replications is under it. Step 2 confirms
the answer with serq.sweep(..., executor="ray"): the rows `serq sweep`
writes (mean response ± 95% CI, utilisations) at every rate.

    pip install "./python[ray]"
    python examples/python/ray_sweep.py                 # a Ray instance on this machine
    ray start --head                                    # or a cluster: on the head node,
    ray start --address HEAD:6379                       # on each worker node,
    python examples/python/ray_sweep.py --address auto  # then this on the head node

To adapt it: change PROGRAM (its `let` constants are the axes), RATES,
SIZES, OBSERVATION, TARGET and REPLICATIONS.
"""

import argparse
import statistics
from pathlib import Path

import ray

import serq

PROGRAM = Path(__file__).resolve().parent.parent / "pd-disaggregation" / "capacity.sq"
RATES = [4, 6, 8, 10, 12]  # lam: requests per second
SIZES = list(range(1, 9))  # ND: decode instances
OBSERVATION = "response"  # seconds from arrival to the last token
TARGET = 3.5  # seconds: the p99 to stay under
REPLICATIONS = 5


@ray.remote
def p99(source: str, lam: float, nd: int, seed: int) -> float:
    """One replication at one point, in a Ray worker: its p99."""
    program = serq.compile(source=source, sets={"lam": lam, "ND": nd}, seed=seed)
    return serq.run(program).observe(OBSERVATION).p99


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", help='a Ray cluster to join ("auto": the one `ray start` began)')
    args = parser.parse_args()
    ray.init(address=args.address)

    source = PROGRAM.read_text()
    # Replication k runs on seed base + k at every point, as serq's studies do.
    base = serq.compile(source=source).seed
    points = [(lam, nd) for lam in RATES for nd in SIZES]
    shared = ray.put(source)
    tasks = {
        (lam, nd): [p99.remote(shared, lam, nd, base + k) for k in range(REPLICATIONS)]
        for lam, nd in points
    }
    mean_p99 = {point: statistics.mean(ray.get(refs)) for point, refs in tasks.items()}

    print(f"mean p99 of {OBSERVATION} (s) over {REPLICATIONS} replications; * = under {TARGET}")
    print("lam \\ ND " + "".join(f"{nd:>9}" for nd in SIZES))
    smallest = {}
    for lam in RATES:
        cells = []
        for nd in SIZES:
            value = mean_p99[(lam, nd)]
            meets = value < TARGET
            if meets and lam not in smallest:
                smallest[lam] = nd
            cells.append(f"{value:8.2f}{'*' if meets else ' '}")
        print(f"{lam:>8} " + "".join(cells))
    if len(smallest) < len(RATES):
        missed = [lam for lam in RATES if lam not in smallest]
        print(f"no deployment in ND = {SIZES[0]}..{SIZES[-1]} meets the target at lam = {missed}")
        return
    answer = max(smallest.values())
    print(f"smallest ND meeting p99 < {TARGET} s at every rate: {answer}")

    # Confirm with serq's own study on Ray: the rows `serq sweep` writes.
    rows = serq.sweep(PROGRAM, grid={"lam": RATES, "ND": [answer]}, replications=REPLICATIONS, executor="ray")
    for row in rows:
        utils = [row[f"D[{j}].util"] for j in range(answer)]
        print(
            f"lam {row['lam']:>3}  ND {row['ND']}  mean {OBSERVATION} "
            f"{row[OBSERVATION + '.mean']:.3f} ± {row[OBSERVATION + '.ci']:.3f} s  "
            f"decoders busy {min(utils):.2f}-{max(utils):.2f}"
        )


if __name__ == "__main__":
    main()
