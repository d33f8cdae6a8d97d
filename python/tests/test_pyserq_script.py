"""A script written for pyserq 0.1.0 runs unchanged apart from its import,
and reads what pyserq read."""

import json
import subprocess
import sys

from conftest import DATA, PYTHON_DIR


def test_a_pyserq_script_runs_with_only_its_import_changed():
    script = PYTHON_DIR / "tests" / "pyserq_style.py"
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    # The same script with `import pyserq`, run under pyserq 0.1.0, printed
    # this (its JSON writes 5 for serq's 5.0: equal numbers). serq's JSON
    # report has fields pyserq 0.1.0's lacks (a stage's `member`, an
    # observation's p50, p90, p95): every value pyserq printed is serq's.
    expected = json.loads((DATA / "pyserq_style.pyserq-0.1.0.json").read_text())
    assert set(got) == set(expected)
    for key, value in expected.items():
        assert_within(value, got[key], key)


def assert_within(expected, got, where):
    """Every value of `expected` is in `got` at the same place; `got`'s
    objects may hold more keys."""
    if isinstance(expected, dict):
        assert isinstance(got, dict), where
        for key, value in expected.items():
            assert key in got, f"{where}.{key}"
            assert_within(value, got[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), where
        for i, (e, g) in enumerate(zip(expected, got)):
            assert_within(e, g, f"{where}[{i}]")
    else:
        assert got == expected, where


def test_the_scripts_figures_are_those_derived_by_hand():
    done = subprocess.run(
        [sys.executable, str(PYTHON_DIR / "tests" / "pyserq_style.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    got = json.loads(done.stdout)
    # Session k ends the delay at 1 + k, then d[k mod 2] (fifo, 1): d[0]
    # serves sessions 0 and 2 over [1, 2] and [3, 4], d[1] sessions 1 and 3
    # over [2, 3] and [4, 5]; nobody waits. Responses 2, 3, 4, 5.
    assert got["samples"] == [2.0, 3.0, 4.0, 5.0]
    assert (got["count"], got["mean"]) == (4, 3.5)
    # Each d member is busy 2 of 20: util 0.1, 2 completions, no wait.
    assert got["d"] == [["d", 2, 0.1, 0.0], ["d", 2, 0.1, 0.0]]
    # delays.sq with w = 2: each of 3 sessions on its own d member for 2.
    assert got["sized_samples"] == [2.0, 2.0, 2.0]
    assert got["sized_d"] == [[1, 0.2]] * 3
