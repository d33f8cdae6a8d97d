#!/usr/bin/env python3
"""Time the reference implementation (pyserq 0.1.0) and one or more serq
binaries on the same program files, in one run, and print each one's time
and its ratio to the reference.

usage: python3 tools/bench/compare.py [--serq [NAME=]PATH ...]
                                      [--python .venv-ref/bin/python]
                                      [--repeat 3] [--reference-repeat N]
                                      [--set NAME=V ...]
                                      [--scale-horizon K] [--clock cpu|wall]
                                      [--no-reference]
                                      [--json] [FILE.sq ...]

With no FILE, every tools/bench/programs/*.sq. `--serq` may be given several
times (`--serq before=old/serq --serq after=target/release/serq`): each binary
is a column and a ratio, so before/after figures come from one sitting on
one machine. Each program runs --repeat times under each serq binary and
--reference-repeat times (default --repeat) under the reference; the fastest
time counts.

How each is timed (the output says so too):
  reference  inside its own Python process: pyserq.compile(path=...) + run,
             interpreter start-up and import excluded;
  serq       as a whole `serq run --json FILE` process, start-up included,
             so the ratio favours the reference on tiny programs.
The clock is CPU time by default (the process's user + system time: on a
machine shared with builds, wall-clock time mostly measures the others);
`--clock wall` takes wall-clock time.

`--set NAME=V` replaces a `let` in both implementations. `--scale-horizon K`
multiplies the program's horizon by K in both (K = 50 turns the 20 000-arrival
programs into the million-arrival ones). pyserq 0.1.0 accepts only literal
array sizes, so when a program sizes an array with a `let` (`stage P[NP]`)
the reference is given a temporary copy, next to the original so that `use`
and relative `trace` paths still resolve, whose sizes are the literals serq
folded (`serq ir`, --set included). Only the named file is rewritten, not
the files it `use`s.

Both reports' `events` are printed as a sanity check; they need not match
exactly (spec Q10). The reference is a test oracle: install it in a
git-ignored venv,
    python3 -m venv .venv-ref && .venv-ref/bin/pip install pyserq==0.1.0
"""
import argparse
import collections
import glob
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

REFERENCE_TIMER = r"""
import json, sys, time, pyserq
path, repeat, overrides = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
clock = time.process_time if sys.argv[4] == "cpu" else time.perf_counter
best = None
for _ in range(repeat):
    t = clock()
    r = pyserq.run(pyserq.compile(path=path, **overrides))
    dt = clock() - t
    best = dt if best is None else min(best, dt)
print(json.dumps({"seconds": best, "events": json.loads(r.json())["events"]}))
"""

# `stage NAME[SIZE]` or `pool NAME[SIZE]`; SIZE holds no `]` (a constant
# expression has no indexing).
ARRAY_DECL = re.compile(r"\b(stage|pool)(\s+)([^\W\d]\w*)(\s*)\[([^\]]*)\]")
INTEGER_LITERAL = re.compile(r"\s*\d+\s*")


def parse_set(text):
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError("expected NAME=VALUE, found %r" % text)
    return name.strip(), value.strip()


def parse_serq(text):
    name, sep, path = text.partition("=")
    if sep and name and "/" not in name:
        return name, path
    return "serq", text


def set_flags(sets):
    return [flag for name, value in sets for flag in ("--set", "%s=%s" % (name, value))]


def linked(serq, path, sets):
    """The program as serq links it: its horizon and each array's size."""
    out = subprocess.run([serq, "ir", path] + set_flags(sets), capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("%s ir failed on %s:\n%s" % (serq, path, out.stderr))
    ir = json.loads(out.stdout)
    sizes = collections.Counter()
    for kind in ("stages", "pools"):
        for member in ir[kind]:
            sizes[(kind[:-1], member["name"])] += 1
    return ir["horizon"], sizes


def with_literal_sizes(path, sizes):
    """A temporary copy of `path` beside it whose array sizes are literals,
    or None when the file already writes only literals."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    rewritten = False

    def literal(m):
        nonlocal rewritten
        kind, gap, name, space, size = m.groups()
        if INTEGER_LITERAL.fullmatch(size) or (kind, name) not in sizes:
            return m.group(0)
        rewritten = True
        return "%s%s%s%s[%d]" % (kind, gap, name, space, sizes[(kind, name)])

    source = ARRAY_DECL.sub(literal, source)
    if not rewritten:
        return None
    folder, base = os.path.split(os.path.abspath(path))
    fd, copy = tempfile.mkstemp(prefix=".ref-", suffix="-" + base, dir=folder)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(source)
    return copy


def children_cpu():
    """CPU seconds (user + system) of the child processes waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_reference(python, path, repeat, sets, horizon, clock):
    overrides = {}
    if sets:
        overrides["sets"] = {name: float(value) for name, value in sets}
    if horizon is not None:
        overrides["horizon"] = horizon
    out = subprocess.run([python, "-c", REFERENCE_TIMER, path, str(repeat), json.dumps(overrides),
                          clock], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("reference failed on %s:\n%s" % (path, out.stderr))
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return result["seconds"], result["events"]


def time_serq(serq, path, repeat, sets, horizon, clock):
    command = [serq, "run", "--json", path] + set_flags(sets)
    if horizon is not None:
        command += ["--horizon", repr(horizon)]
    best, events = None, None
    now = children_cpu if clock == "cpu" else time.perf_counter
    for _ in range(repeat):
        t = now()
        out = subprocess.run(command, capture_output=True, text=True)
        dt = now() - t
        if out.returncode != 0:
            sys.exit("%s failed on %s:\n%s" % (serq, path, out.stderr))
        best = dt if best is None else min(best, dt)
        events = json.loads(out.stdout)["events"]
    return best, events


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description="Time pyserq 0.1.0 and serq on the same programs.")
    ap.add_argument("--serq", action="append", type=parse_serq, metavar="[NAME=]PATH",
                    help="a serq binary to time (repeatable; default target/release/serq)")
    ap.add_argument("--python", default=os.path.join(root, ".venv-ref/bin/python"))
    ap.add_argument("--repeat", type=int, default=3, help="runs of each program by each serq")
    ap.add_argument("--reference-repeat", type=int, metavar="N",
                    help="runs by the reference (default --repeat; a slow reference run "
                         "is long enough that one is not much noisier)")
    ap.add_argument("--set", action="append", type=parse_set, default=[], metavar="NAME=V",
                    help="replace a `let` in both implementations (repeatable)")
    ap.add_argument("--scale-horizon", type=float, metavar="K",
                    help="multiply each program's horizon by K in both implementations")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="CPU time (default: robust on a shared machine) or wall-clock time")
    ap.add_argument("--no-reference", action="store_true", help="time serq only")
    ap.add_argument("--json", action="store_true", help="print one JSON object per program")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    reference_repeat = args.reference_repeat or args.repeat
    binaries = args.serq or [("serq", os.path.join(root, "target/release/serq"))]
    files = args.files or sorted(glob.glob(os.path.join(here, "programs", "*.sq")))

    if not args.json:
        print("%s time; reference: pyserq in-process (compile + run, interpreter start-up "
              "excluded); serq: whole `serq run --json` process (start-up included); "
              "best of %d (reference) and %d (serq)"
              % ("CPU" if args.clock == "cpu" else "wall-clock", reference_repeat, args.repeat))
        header = "%-30s" % "program"
        if not args.no_reference:
            header += " %11s %10s" % ("reference s", "events")
        for name, _ in binaries:
            header += " %11s %10s" % (name + " s", "events")
            if not args.no_reference:
                header += " %8s" % "ratio"
        print(header)
    for path in files:
        horizon, sizes = linked(binaries[0][1], path, args.set)
        horizon = horizon * args.scale_horizon if args.scale_horizon else None
        row = {"program": os.path.basename(path), "horizon": horizon,
               "sets": dict(args.set), "serq": {}, "clock": args.clock, "timing": {
                   "reference": "in-process compile + run, interpreter start-up excluded",
                   "serq": "whole process, start-up included"}}
        line = "%-30s" % row["program"]
        if not args.no_reference:
            copy = with_literal_sizes(path, sizes)
            try:
                ref_s, ref_ev = time_reference(args.python, copy or path, reference_repeat,
                                               args.set, horizon, args.clock)
            finally:
                if copy:
                    os.remove(copy)
            row["reference"] = {"seconds": ref_s, "events": ref_ev}
            line += " %11.4f %10d" % (ref_s, ref_ev)
        for name, serq in binaries:
            serq_s, serq_ev = time_serq(serq, path, args.repeat, args.set, horizon, args.clock)
            row["serq"][name] = {"seconds": serq_s, "events": serq_ev}
            line += " %11.4f %10d" % (serq_s, serq_ev)
            if not args.no_reference:
                row["serq"][name]["ratio"] = ref_s / serq_s
                line += " %7.1fx" % (ref_s / serq_s)
        print(json.dumps(row) if args.json else line)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
