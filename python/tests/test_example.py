"""examples/python/ray_sweep.py runs as its docstring says and finds the
deployment its table shows."""

import subprocess
import sys

import pytest

from conftest import REPO, require_extra


@pytest.mark.distributed
def test_the_ray_example_finds_the_smallest_deployment():
    require_extra("ray")
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "python" / "ray_sweep.py")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # The rate 12 row: three decoders miss the target (p99 about 12 s), four meet it.
    row_12 = next(line.split() for line in lines if line.startswith("      12 "))
    assert not row_12[3].endswith("*") and row_12[4].endswith("*")
    assert "smallest ND meeting p99 < 3.5 s at every rate: 4" in lines
    # The confirmation: one row of serq.sweep per rate, at ND = 4.
    assert sum(line.startswith("lam ") and " ND 4 " in line for line in lines) == 5
