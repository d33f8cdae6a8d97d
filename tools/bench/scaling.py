#!/usr/bin/env python3
"""How a whole run's cost grows with the flow system's size and the arrival
count: serq on random pairs by index draw (the randidx programs of
tools/bench/programs/) at N = 50, 200, 1000, 5000 pairs of NICs (load 0.7
per NIC) and 10^4, 10^5, 10^6 arrivals, under both share policies.

usage: python3 tools/bench/scaling.py [--serq target/release/serq]
                                      [--pairs 50,200,1000,5000]
                                      [--arrivals 10000,100000,1000000]
                                      [--policy maxmin,bottleneck]

Prints, per run, serq's CPU seconds (user + system of the whole process,
start-up included), its events and events per CPU second, and the CPU
microseconds per arrival. The programs are written to a temporary folder.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile

PROGRAM = """stage E[{n}] : ps(1); stage I[{n}] : ps(1);
share {policy};
workload {{ arrive poisson({rate}); }}
session {{
  set i = floor(~uniform(0, {n}));
  set j = floor(~uniform(0, {n}));
  run E[i], I[j] (~exp(1));
  observe t = now;
  end;
}}
run {{ horizon {horizon}; seed 3; }}
"""


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def numbers(text):
    return [int(float(x)) for x in text.split(",")]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description="serq's cost as the flow system and the run grow.")
    ap.add_argument("--serq", default=os.path.join(root, "target/release/serq"))
    ap.add_argument("--pairs", type=numbers, default=[50, 200, 1000, 5000])
    ap.add_argument("--arrivals", type=numbers, default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--policy", default="maxmin,bottleneck")
    args = ap.parse_args()
    print("serq CPU time (whole process, start-up included), one run each")
    print("%-10s %6s %9s %10s %10s %12s %12s" % (
        "policy", "N", "arrivals", "serq s", "events", "events/s", "us/arrival"))
    with tempfile.TemporaryDirectory() as folder:
        for policy in args.policy.split(","):
            for n in args.pairs:
                for arrivals in args.arrivals:
                    rate = 0.7 * n
                    path = os.path.join(folder, "randidx_%d_%s.sq" % (n, policy))
                    with open(path, "w") as f:
                        f.write(PROGRAM.format(n=n, policy=policy, rate=rate,
                                               horizon=repr(arrivals / rate)))
                    t = children_cpu()
                    out = subprocess.run([args.serq, "run", "--json", path],
                                         capture_output=True, text=True)
                    seconds = children_cpu() - t
                    if out.returncode != 0:
                        sys.exit("serq failed on %s:\n%s" % (path, out.stderr))
                    events = json.loads(out.stdout)["events"]
                    print("%-10s %6d %9d %10.3f %10d %12.0f %12.2f" % (
                        policy, n, arrivals, seconds, events, events / seconds,
                        1e6 * seconds / arrivals))
                    sys.stdout.flush()


if __name__ == "__main__":
    main()
