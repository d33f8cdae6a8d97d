#!/usr/bin/env python3
"""Run a serq implementation over the conformance cases and compare its
reports with the expected ones (produced by the reference implementation,
pyserq 0.1.0).

usage: python3 check.py --serq 'CMD' [--cases DIR] [--exclude NAME ...] [NAME ...]

For each case NAME (NAME.sq with NAME.expected.json in the case directory;
all of them when no NAME is given) it runs

    CMD run --json --samples DIR/NAME.sq

(CMD split as a shell would, 60 s timeout) and compares:

  rejected programs       the command exits non-zero, and its output (stdout
                          and stderr) contains every key word of
                          "message_contains", ignoring case, and does not
                          say that a construct is "not supported";
  deterministic programs  within 1e-9 (absolute or relative): per observe
                          count, mean, p99 and the sorted samples; per stage
                          (matched by name and order) completed, mean_number,
                          utilization, throughput, mean_service, mean_wait;
                          per pool (likewise) admissions, mean_used,
                          mean_queue, mean_holders, mean_wait; and the run's
                          arrivals, ended and end; also, where the expected
                          report has them (Tier 2, the serving engine), per
                          stage iterations and per pool mean_cached,
                          evicted_entries, evicted_units, preemptions,
                          spills, rejected, stuck;
  stochastic programs     each observe's mean within max(3 x the reference's
                          ci, 5% of |the reference's mean|), and each stage's
                          utilization within 0.03.

A null expected value matches null (or NaN) only. Fields the report has
beyond these are ignored. One line per case (PASS, or FAIL with the first
difference), then "N passed, M failed"; the exit status is 1 if any failed.
Python 3 standard library only.

Copied from the project's shared conformance material
(shared/conformance/check.py) so that a clone can run it; the only change
is the default --cases, the repository's tests/conformance/.
"""
import argparse
import json
import math
import os
import shlex
import subprocess
import sys

TIMEOUT_S = 60
TOL = 1e-9
UTIL_TOL = 0.03

RUN_FIELDS = ("arrivals", "ended", "end")
OBSERVE_FIELDS = ("count", "mean", "p99")
STAGE_FIELDS = ("completed", "mean_number", "utilization", "throughput", "mean_service", "mean_wait")
POOL_FIELDS = ("admissions", "mean_used", "mean_queue", "mean_holders", "mean_wait")
# Compared only where the expected report has them (Tier 2: the serving engine).
STAGE_FIELDS_IF_EXPECTED = ("iterations",)
POOL_FIELDS_IF_EXPECTED = ("mean_cached", "evicted_entries", "evicted_units",
                           "preemptions", "spills", "rejected", "stuck")


class Mismatch(Exception):
    pass


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def undefined(x):
    return x is None or (isinstance(x, float) and math.isnan(x))


def close(expected, actual):
    if undefined(expected):
        return undefined(actual)
    if actual is None and is_number(expected) and math.isinf(expected):
        return True  # JSON has no infinity: serq prints a non-finite sample as null
    if not is_number(expected) or not is_number(actual):
        return expected == actual
    if math.isnan(actual):
        return False
    if math.isinf(expected) or math.isinf(actual):
        return expected == actual
    diff = abs(expected - actual)
    return diff <= TOL or diff <= TOL * max(abs(expected), abs(actual))


def show(x):
    return "null" if x is None else repr(x)


def field(obj, key, where):
    if not isinstance(obj, dict) or key not in obj:
        raise Mismatch("%s: no field %r" % (where, key))
    return obj[key]


def compare_field(exp_obj, act_obj, key, where):
    e = exp_obj.get(key)
    a = field(act_obj, key, where)
    if not close(e, a):
        raise Mismatch("%s %s: expected %s, got %s" % (where, key, show(e), show(a)))


def matched_list(expected, actual, kind):
    """The report's stages or pools, matched by name and order."""
    act = field(actual, kind, "report")
    exp = expected.get(kind, [])
    if not isinstance(act, list):
        raise Mismatch("report %s: not a list" % kind)
    if len(act) != len(exp):
        raise Mismatch("report %s: expected %d entries (%s), got %d (%s)" % (
            kind, len(exp), " ".join(x.get("name", "?") for x in exp),
            len(act), " ".join(str(x.get("name", "?")) if isinstance(x, dict) else "?" for x in act)))
    for i, (e, a) in enumerate(zip(exp, act)):
        if field(a, "name", "%s[%d]" % (kind, i)) != e["name"]:
            raise Mismatch("%s[%d]: expected name %r, got %r" % (kind, i, e["name"], a.get("name")))
    return list(zip(exp, act))


def observe_of(actual, name):
    observes = field(actual, "observes", "report")
    if not isinstance(observes, dict) or name not in observes:
        raise Mismatch("observe %r missing from the report" % name)
    return observes[name]


def check_deterministic(exp, actual):
    ref = exp["report"]
    for key in RUN_FIELDS:
        compare_field(ref, actual, key, "run")
    for name, e_obs in ref.get("observes", {}).items():
        a_obs = observe_of(actual, name)
        where = "observe %r" % name
        for key in OBSERVE_FIELDS:
            compare_field(e_obs, a_obs, key, where)
        e_samples = exp.get("samples", {}).get(name, [])
        a_samples = field(a_obs, "samples", where)
        if not isinstance(a_samples, list):
            raise Mismatch("%s samples: not a list" % where)
        try:
            # nulls (non-finite samples) sort last, as infinities do
            a_samples = sorted(a_samples, key=lambda x: (x is None, 0 if x is None else x))
        except TypeError:
            raise Mismatch("%s samples: not all numbers" % where)
        if len(a_samples) != len(e_samples):
            raise Mismatch("%s: expected %d samples, got %d" % (where, len(e_samples), len(a_samples)))
        for i, (e, a) in enumerate(zip(e_samples, a_samples)):
            if not close(e, a):
                raise Mismatch("%s sorted sample %d: expected %s, got %s" % (where, i, show(e), show(a)))
    for kind, fields, optional in (("stages", STAGE_FIELDS, STAGE_FIELDS_IF_EXPECTED),
                                   ("pools", POOL_FIELDS, POOL_FIELDS_IF_EXPECTED)):
        for i, (e, a) in enumerate(matched_list(ref, actual, kind)):
            where = "%s[%d] %r" % (kind[:-1], i, e["name"])
            for key in fields:
                compare_field(e, a, key, where)
            for key in optional:
                if key in e:
                    compare_field(e, a, key, where)


def check_stochastic(exp, actual):
    ref = exp["report"]
    for name, e_obs in ref.get("observes", {}).items():
        a_obs = observe_of(actual, name)
        e_mean = e_obs.get("mean")
        a_mean = field(a_obs, "mean", "observe %r" % name)
        if undefined(e_mean):
            if not undefined(a_mean):
                raise Mismatch("observe %r mean: expected null, got %s" % (name, show(a_mean)))
            continue
        if not is_number(a_mean) or math.isnan(a_mean):
            raise Mismatch("observe %r mean: expected about %s, got %s" % (name, show(e_mean), show(a_mean)))
        ci = e_obs.get("ci")
        tol = max(3 * ci if is_number(ci) else 0.0, 0.05 * abs(e_mean))
        if abs(a_mean - e_mean) > tol:
            raise Mismatch("observe %r mean: expected %s +- %.6g, got %s" % (name, show(e_mean), tol, show(a_mean)))
    for i, (e, a) in enumerate(matched_list(ref, actual, "stages")):
        e_u = e.get("utilization")
        a_u = field(a, "utilization", "stage[%d] %r" % (i, e["name"]))
        if undefined(e_u) or undefined(a_u) or not is_number(a_u):
            if not (undefined(e_u) and undefined(a_u)):
                raise Mismatch("stage[%d] %r utilization: expected %s, got %s" % (i, e["name"], show(e_u), show(a_u)))
            continue
        if abs(a_u - e_u) > UTIL_TOL:
            raise Mismatch("stage[%d] %r utilization: expected %s +- %s, got %s" % (i, e["name"], show(e_u), UTIL_TOL, show(a_u)))


def parse_report(stdout):
    text = stdout.strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    start, end = text.find("{"), text.rfind("}")
    if start >= 0 and end > start:
        try:
            return json.loads(text[start:end + 1])
        except ValueError:
            pass
    raise Mismatch("stdout is not one JSON object: %r" % text[:200])


def first_line(text):
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""


def run_case(cmd, case_dir, name):
    sq = os.path.join(case_dir, name + ".sq")
    exp_path = os.path.join(case_dir, name + ".expected.json")
    if not os.path.exists(sq):
        raise Mismatch("no %s" % sq)
    if not os.path.exists(exp_path):
        raise Mismatch("no %s" % exp_path)
    with open(exp_path) as f:
        exp = json.load(f)
    argv = cmd + ["run", "--json", "--samples", sq]
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise Mismatch("timed out after %d s" % TIMEOUT_S)
    except OSError as e:
        raise Mismatch("cannot run %s: %s" % (" ".join(argv), e))
    stdout = proc.stdout.decode("utf-8", "replace")
    stderr = proc.stderr.decode("utf-8", "replace")

    if exp.get("error"):
        if proc.returncode == 0:
            raise Mismatch("accepted (exit 0), expected a rejection")
        output = (stdout + "\n" + stderr).lower()
        if "not supported" in output:
            # refused, but for lacking the construct, not for the rule the case breaks
            raise Mismatch("refused as not supported, not for the rule: %s" % (first_line(stderr) or first_line(stdout)))
        missing = [k for k in exp.get("message_contains", []) if k.lower() not in output]
        if missing:
            raise Mismatch("rejected, but the message lacks %s: %s" % (
                ", ".join(repr(k) for k in missing), first_line(stderr) or first_line(stdout)))
        return
    if proc.returncode != 0:
        raise Mismatch("exit status %d: %s" % (proc.returncode, first_line(stderr) or first_line(stdout)))
    actual = parse_report(stdout)
    if not isinstance(actual, dict):
        raise Mismatch("the report is not a JSON object")
    if exp.get("stochastic"):
        check_stochastic(exp, actual)
    else:
        check_deterministic(exp, actual)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="Compare a serq implementation with the conformance cases.")
    ap.add_argument("--serq", required=True, help="the command that runs serq, e.g. 'target/release/serq'")
    # Shipped with serq as tools/conformance/check.py: the cases are the
    # repository's tests/conformance/ (t2/ holds the serving engine's).
    cases = os.path.join(here, os.pardir, os.pardir, "tests", "conformance")
    ap.add_argument("--cases", default=cases, help="case directory (default: the repository's tests/conformance/)")
    ap.add_argument("--exclude", action="append", default=[], metavar="NAME",
                    help="leave case NAME out (repeatable), e.g. a case of a construct not built yet")
    ap.add_argument("names", nargs="*", help="case names (NAME for NAME.sq); default all")
    args = ap.parse_args()

    cmd = shlex.split(args.serq)
    if not cmd:
        ap.error("--serq is empty")
    case_dir = os.path.abspath(args.cases)
    if not os.path.isdir(case_dir):
        ap.error("no case directory %s" % case_dir)
    names = [n[:-3] if n.endswith(".sq") else n for n in args.names]
    if not names:
        names = sorted(f[:-3] for f in os.listdir(case_dir) if f.endswith(".sq"))
    excluded = {n[:-3] if n.endswith(".sq") else n for n in args.exclude}
    names = [n for n in names if n not in excluded]
    if not names:
        ap.error("no cases in %s" % case_dir)

    passed = failed = 0
    width = max(len(n) for n in names)
    for name in names:
        try:
            run_case(cmd, case_dir, name)
        except Mismatch as m:
            failed += 1
            print("FAIL %-*s  %s" % (width, name, m))
        else:
            passed += 1
            print("PASS %s" % name)
        sys.stdout.flush()
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
