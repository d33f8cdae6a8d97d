#!/usr/bin/env python3
"""Run the reference implementation (pyserq 0.1.0) and serq on the same
program files, in one run, and print the time of each and their ratio.

usage: python3 tools/bench/compare.py [--serq target/release/serq]
                                      [--python .venv-ref/bin/python]
                                      [--repeat 3] [FILE.sq ...]

With no FILE, every tools/bench/programs/*.sq. Each program runs --repeat
times under each implementation and the fastest time counts. The reference
is timed inside its own Python process (compile + run, interpreter start-up
excluded); serq is timed as a whole `serq run --json FILE` process, start-up
included, so the ratio favours the reference on tiny programs. Both reports'
`events` are printed as a sanity check (they need not match exactly: spec
Q10). The reference is a test oracle: install it in a git-ignored venv,
python3 -m venv .venv-ref && .venv-ref/bin/pip install pyserq==0.1.0
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import time

REFERENCE_TIMER = r"""
import json, sys, time, pyserq
src = open(sys.argv[1]).read()
best = None
for _ in range(int(sys.argv[2])):
    t = time.perf_counter()
    r = pyserq.run(pyserq.compile(source=src))
    dt = time.perf_counter() - t
    best = dt if best is None else min(best, dt)
print(json.dumps({"seconds": best, "events": json.loads(r.json())["events"]}))
"""


def time_reference(python, path, repeat):
    out = subprocess.run([python, "-c", REFERENCE_TIMER, path, str(repeat)],
                         capture_output=True, text=True, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return result["seconds"], result["events"]


def time_serq(serq, path, repeat):
    best, events = None, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = subprocess.run([serq, "run", "--json", path], capture_output=True, text=True, check=True)
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
        events = json.loads(out.stdout)["events"]
    return best, events


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description="Time pyserq 0.1.0 and serq on the same programs.")
    ap.add_argument("--serq", default=os.path.join(root, "target/release/serq"))
    ap.add_argument("--python", default=os.path.join(root, ".venv-ref/bin/python"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    files = args.files or sorted(glob.glob(os.path.join(here, "programs", "*.sq")))
    print("%-28s %12s %12s %10s %10s %9s" % ("program", "reference s", "serq s", "ref events", "serq ev", "ratio"))
    for path in files:
        ref_s, ref_ev = time_reference(args.python, path, args.repeat)
        serq_s, serq_ev = time_serq(args.serq, path, args.repeat)
        print("%-28s %12.4f %12.4f %10d %10d %8.1fx" % (
            os.path.basename(path), ref_s, serq_s, ref_ev, serq_ev, ref_s / serq_s))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
