#!/usr/bin/env python3
"""Recompute the expected files of serq's serving-engine corpus
(tests/serving/) with the reference implementation, pyserq 0.1.0.

usage: tools/serving/regen.py [--cases DIR] [--dry-run] [--timeout S] [NAME ...]

Run it with the Python that has pyserq 0.1.0 installed (for example
/work/main/.venv-ref/bin/python tools/serving/regen.py). For every
NAME.sq (all of DIR, default tests/serving, or the NAMEs given) the
program is compiled from its file and run, and NAME.expected.json is
written in the format of ../shared/conformance (see its README):

  accepted  {"stochastic": BOOL, "report": REPORT, "samples": {OBS: [sorted]}}
  rejected  {"error": true, "message_contains": [KEY WORD, ...]}

Beyond ../shared/conformance/regen.py, this script refuses a case the
corpus must not hold:

* the reference hangs on it (no answer within --timeout seconds) or
  panics (a Rust panic arrives as a BaseException, not a ValueError):
  spec §10 says serq refuses such programs, so they are no conformance
  cases;
* a case flagged deterministic whose report changes with the seed (it
  is run with its own seed and with another one): a deterministic case
  is compared within 1e-9, so it must not depend on a random stream;
* an observation with a non-finite sample (expected files hold numbers).

Each case runs in a child process, so a hang or a crash of the reference
stops that case only. The "stochastic" flag and a rejected case's key
words are kept from the existing expected file; a new case is flagged
stochastic by the same test as ../shared/conformance/regen.py, and a new
rejected case gets an empty key-word list and its message printed.
--dry-run compares and writes nothing; the exit status is non-zero when
anything would change or any case was refused.
"""
import argparse
import json
import math
import multiprocessing
import os
import re
import sys

REFERENCE_VERSION = "0.1.0"
OTHER_SEED = 977

CERTAIN = r"\(\s*[01](\.0*)?\s*\)"
STOCHASTIC = re.compile(
    r"poisson\s*\(|renewal\s*\(\s*~(?!\s*det\b)|~\s*(exp|uniform|erlang|h2)\b"
    r"|~\s*bernoulli\s*(?!" + CERTAIN + r")\(|branch\s+with\s*(?!" + CERTAIN + r")\("
    r"|\btrace\s*\"[^\"]*\"\s*;"
)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def looks_stochastic(text):
    return bool(STOCHASTIC.search(strip_comments(text)))


def evaluate(path, seed, answer):
    """In a child process: ('ok', report, samples), ('error', message) or
    ('panic', message), put on the `answer` queue."""
    os.environ["RUST_BACKTRACE"] = "0"
    import pyserq

    try:
        program = pyserq.compile(path) if seed is None else pyserq.compile(path, seed=seed)
        result = pyserq.run(program)
    except Exception as exc:  # a ValueError: the reference refuses the program
        answer.put(("error", str(exc)))
        return
    except BaseException as exc:  # a PanicException: the reference crashed
        answer.put(("panic", str(exc).splitlines()[0] if str(exc) else type(exc).__name__))
        return
    report = json.loads(result.json())
    samples = {}
    for name in report.get("observes", {}):
        samples[name] = sorted(float(v) for v in result.observe(name).samples)
    answer.put(("ok", report, samples))


def run_child(path, seed, timeout):
    # Read the answer before joining: a child blocks on a large answer
    # until the queue is drained, so join() first would wait for ever.
    import queue

    answer = multiprocessing.Queue()
    child = multiprocessing.Process(target=evaluate, args=(path, seed, answer))
    child.start()
    try:
        outcome = answer.get(timeout=timeout)
    except queue.Empty:
        outcome = None
    if child.is_alive() and outcome is None:
        child.kill()
        child.join()
        return ("hang", "no answer within %g s" % timeout)
    child.join()
    if outcome is None:
        return ("panic", "the reference process died (exit %s)" % child.exitcode)
    return outcome


def without_seed(report):
    return {k: v for k, v in report.items() if k != "seed"}


def dump(obj):
    """JSON text: the report indented, each sample list on one line (as
    ../shared/conformance/regen.py writes it)."""
    if obj.get("error"):
        return json.dumps(obj, indent=1) + "\n"
    parts = ["{",
             ' "stochastic": %s,' % json.dumps(obj["stochastic"]),
             ' "report": ' + json.dumps(obj["report"], indent=1).replace("\n", "\n ") + ","]
    names = list(obj["samples"])
    if names:
        parts.append(' "samples": {')
        for i, name in enumerate(names):
            comma = "," if i + 1 < len(names) else ""
            parts.append("  %s: %s%s" % (json.dumps(name), json.dumps(obj["samples"][name]), comma))
        parts.append(" }")
    else:
        parts.append(' "samples": {}')
    parts.append("}")
    return "\n".join(parts) + "\n"


def regenerate(name, src_path, exp_path, timeout):
    """(new expected object or None, problem text or None, note)."""
    with open(src_path) as f:
        text = f.read()
    old = None
    if os.path.exists(exp_path):
        with open(exp_path) as f:
            old = json.load(f)
    outcome = run_child(src_path, None, timeout)
    if outcome[0] in ("hang", "panic"):
        return None, "REFERENCE %s: %s (keep it out of the corpus)" % (outcome[0].upper(), outcome[1]), ""
    if outcome[0] == "error":
        message = outcome[1]
        if old is not None and not old.get("error"):
            return None, "WAS ACCEPTED, NOW REJECTED: %s" % message.strip(), ""
        keys = list(old.get("message_contains", [])) if old else []
        missing = [k for k in keys if k.lower() not in message.lower()]
        if missing:
            return None, "KEY WORDS %s NOT IN: %s" % (missing, message.strip()), ""
        note = "" if old else "  (new: choose key words from: %s)" % message.strip().replace("\n", " | ")
        return {"error": True, "message_contains": keys}, None, note
    _, report, samples = outcome
    if old is not None and old.get("error"):
        return None, "WAS REJECTED, NOW ACCEPTED", ""
    stochastic = bool(old["stochastic"]) if old and "stochastic" in old else looks_stochastic(text)
    for obs, values in samples.items():
        if not all(math.isfinite(v) for v in values):
            return None, "observation %r has a non-finite sample" % obs, ""
    if not stochastic:
        other = run_child(src_path, OTHER_SEED, timeout)
        if other[0] != "ok" or without_seed(other[1]) != without_seed(report) or other[2] != samples:
            return None, "flagged deterministic, but its report changes with the seed", ""
    return {"stochastic": stochastic, "report": report, "samples": {} if stochastic else samples}, None, ""


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_cases = os.path.normpath(os.path.join(here, "..", "..", "tests", "serving"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default=default_cases, help="case directory (default: tests/serving)")
    ap.add_argument("--dry-run", action="store_true", help="compare, write nothing")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds before a case counts as a hang")
    ap.add_argument("names", nargs="*", help="case names (NAME for NAME.sq); default all")
    args = ap.parse_args()

    import pyserq

    version = getattr(pyserq, "__version__", "?")
    if version != REFERENCE_VERSION:
        print("warning: pyserq %s, the expected values are those of %s" % (version, REFERENCE_VERSION), file=sys.stderr)

    names = args.names or sorted(f[:-3] for f in os.listdir(args.cases) if f.endswith(".sq"))
    problems = 0
    for name in names:
        src_path = os.path.join(args.cases, name + ".sq")
        exp_path = os.path.join(args.cases, name + ".expected.json")
        if not os.path.exists(src_path):
            print("%-40s MISSING %s" % (name, src_path))
            problems += 1
            continue
        new, problem, note = regenerate(name, src_path, exp_path, args.timeout)
        if problem:
            print("%-40s %s" % (name, problem))
            problems += 1
            continue
        text_new = dump(new)
        if args.dry_run:
            same = os.path.exists(exp_path) and open(exp_path).read() == text_new
            problems += 0 if same else 1
            print("%-40s %s" % (name, "same" if same else "DIFFERS"))
        else:
            with open(exp_path, "w") as f:
                f.write(text_new)
            kind = "rejected" if new.get("error") else ("stochastic" if new["stochastic"] else "deterministic")
            print("%-40s %s%s" % (name, kind, note))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
