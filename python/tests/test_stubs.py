"""The type stubs say what the package has: mypy's stubtest compares them
with the installed module, names, signatures and all."""

import subprocess
import sys

from conftest import PYTHON_DIR, require_extra


def test_the_stubs_match_the_module(tmp_path):
    require_extra("mypy")
    done = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "serq", "--mypy-config-file", str(PYTHON_DIR / "pyproject.toml")],
        capture_output=True,
        text=True,
        # Not python/, whose serq/ (without its native half) would shadow the
        # installed package.
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
