#!/usr/bin/env python3
"""Differential run: one serq program in serq and in the reference
implementation (pyserq 0.1.0), every field of the two reports compared.

usage: /work/main/.venv-ref/bin/python tools/serving/diff.py [--serq CMD]
       [--timeout S] [--set NAME=VALUE ...] [--def NAME=EXPR ...] FILE.sq ...

`--set` and `--def` are given to both sides: serq's flags of the same
names, the reference's `compile(sets=..., defs=...)`.

For a deterministic program (regen.py's test) every field the reference
reports is compared within 1e-9 (absolute or relative), `events` and
`seed` excepted (§10 Q10), plus each observation's sorted samples; for a
stochastic one, as check.py compares it (each observation's mean within
max(3 x the reference's ci, 5%), each stage's utilization within 0.03).
A program both refuse is "both reject" with the two messages' first
lines; one refused by one side only is a difference. One line per file
(AGREE, or DIFF with every difference); the exit status is 1 if any
differs. A tool for finding bugs: no test calls it.
"""
import argparse
import json
import math
import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import regen  # noqa: E402  (run_child, looks_stochastic)

TOL = 1e-9
SKIP = {"events", "seed"}


def evaluate(path, sets, defs, answer):
    """regen.evaluate with the `let` and `def` overrides, in a child."""
    os.environ["RUST_BACKTRACE"] = "0"
    import pyserq

    try:
        result = pyserq.run(pyserq.compile(path, sets=sets, defs=defs))
    except Exception as exc:
        answer.put(("error", str(exc)))
        return
    except BaseException as exc:
        answer.put(("panic", str(exc).splitlines()[0] if str(exc) else type(exc).__name__))
        return
    report = json.loads(result.json())
    samples = {name: sorted(float(v) for v in result.observe(name).samples)
               for name in report.get("observes", {})}
    answer.put(("ok", report, samples))


def run_reference(path, sets, defs, timeout):
    """('ok', report, samples), ('error', msg), ('panic', msg) or ('hang', msg)."""
    if not sets and not defs:
        return regen.run_child(path, None, timeout)
    import multiprocessing
    import queue

    answer = multiprocessing.Queue()
    child = multiprocessing.Process(target=evaluate, args=(path, sets, defs, answer))
    child.start()
    try:
        outcome = answer.get(timeout=timeout)
    except queue.Empty:
        outcome = None
    if outcome is None:
        child.kill()
        child.join()
        return ("hang", "no answer within %g s" % timeout)
    child.join()
    return outcome


def close(e, a):
    if e is None:
        return a is None or (isinstance(a, float) and math.isnan(a))
    if isinstance(e, (int, float)) and isinstance(a, (int, float)):
        if math.isinf(e) or math.isinf(a):
            return e == a
        d = abs(e - a)
        return d <= TOL or d <= TOL * max(abs(e), abs(a))
    if isinstance(e, str) and e in ("inf", "-inf") and a is None:
        return True
    if isinstance(e, float) and not math.isfinite(e) and a is None:
        return True  # serq prints a non-finite sample as null
    return e == a


def walk(e, a, where, out):
    if isinstance(e, dict):
        if not isinstance(a, dict):
            out.append("%s: expected an object" % where)
            return
        for k, v in e.items():
            if k in SKIP:
                continue
            if k not in a:
                out.append("%s.%s missing" % (where, k))
                continue
            walk(v, a[k], "%s.%s" % (where, k), out)
    elif isinstance(e, list):
        if not isinstance(a, list) or len(a) != len(e):
            out.append("%s: length %d vs %s" % (where, len(e), len(a) if isinstance(a, list) else "?"))
            return
        for i, (x, y) in enumerate(zip(e, a)):
            walk(x, y, "%s[%d]" % (where, i), out)
    elif not close(e, a):
        out.append("%s: ref %r serq %r" % (where, e, a))


def stochastic_diffs(e, a, out):
    for name, obs in e.get("observes", {}).items():
        m, ci = obs.get("mean"), obs.get("ci")
        am = a.get("observes", {}).get(name, {}).get("mean")
        if m is None or am is None:
            if (m is None) != (am is None):
                out.append("observes.%s.mean: ref %r serq %r" % (name, m, am))
            continue
        tol = max(3 * (ci or 0), 0.05 * abs(m))
        if abs(m - am) > tol:
            out.append("observes.%s.mean: ref %r±%r serq %r" % (name, m, tol, am))
    for i, st in enumerate(e.get("stages", [])):
        u = st.get("utilization")
        au = a["stages"][i].get("utilization") if i < len(a.get("stages", [])) else None
        if u is not None and au is not None and abs(u - au) > 0.03:
            out.append("stages[%d].utilization: ref %r serq %r" % (i, u, au))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--serq", default="target/release/serq")
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="replace a `let` constant on both sides (repeatable)")
    ap.add_argument("--def", dest="defs", action="append", default=[], metavar="NAME=EXPR",
                    help="replace an expression definition's body on both sides (repeatable)")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    sets = {}
    for item in args.set:
        name, _, value = item.partition("=")
        sets[name.strip()] = float(value)
    defs = {}
    for item in args.defs:
        head, _, body = item.partition("=")
        defs[head.split("(")[0].strip()] = body
    flags = sum((["--set", x] for x in args.set), []) + sum((["--def", x] for x in args.defs), [])
    bad = 0
    for path in args.files:
        ref = run_reference(path, sets, defs, args.timeout)
        p = subprocess.run(shlex.split(args.serq) + ["run", "--json", "--samples"] + flags + [path],
                           capture_output=True, text=True, timeout=120)
        out = []
        if ref[0] != "ok" or p.returncode != 0:
            rmsg = ref[1].strip().splitlines()[0] if ref[0] != "ok" and ref[1].strip() else ref[0]
            smsg = (p.stderr.strip().splitlines() or ["?"])[0] if p.returncode else "ok"
            if ref[0] != "ok" and p.returncode != 0:
                print("%s: both reject\n   ref:  %s\n   serq: %s" % (path, rmsg, smsg))
            else:
                bad += 1
                print("%s: DIFF ref %s / serq %s\n   ref:  %s\n   serq: %s" % (
                    path, ref[0], "rc=%d" % p.returncode, rmsg, smsg))
            continue
        _, report, samples = ref
        act = json.loads(p.stdout)
        text = open(path).read()
        stochastic = regen.looks_stochastic(text)
        if stochastic:
            stochastic_diffs(report, act, out)
        else:
            walk(report, act, "report", out)
            for name, vals in samples.items():
                raw = act.get("observes", {}).get(name, {}).get("samples") or []
                got = sorted(v for v in raw if v is not None) + [None] * sum(v is None for v in raw)
                want = sorted(v for v in vals if math.isfinite(v)) + [v for v in vals if not math.isfinite(v)]
                if len(got) != len(vals) or not all(close(x, y) for x, y in zip(want, got)):
                    out.append("samples.%s differ (%d vs %d)" % (name, len(vals), len(got)))
        if out:
            bad += 1
            print("%s: DIFF (%s)" % (path, "stochastic" if stochastic else "deterministic"))
            for line in out[:12]:
                print("   " + line)
        else:
            print("%s: AGREE (%s)" % (path, "stochastic" if stochastic else "deterministic"))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
