"""Shared fixtures: the checkout, its examples, and serq's CLI to compare
the package against (the release binary `cargo test --release` builds, or
SERQ_BIN; built here when missing)."""

import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

PYTHON_DIR = Path(__file__).resolve().parent.parent
REPO = PYTHON_DIR.parent
DATA = Path(__file__).resolve().parent / "data"
EXAMPLES = sorted((REPO / "examples").glob("**/*.sq"))


def pytest_configure(config):
    config.addinivalue_line("markers", "distributed: needs Ray or Dask (an extra)")
    # `python -m pytest` from python/ would import the source tree's serq/,
    # without its native module (or with whatever an old `maturin develop`
    # left there), instead of the installed package.
    spec = importlib.util.find_spec("serq")
    if spec is None or spec.origin is None or Path(spec.origin).resolve().parent == PYTHON_DIR / "serq":
        raise pytest.UsageError(
            f"serq would be imported from {spec.origin if spec else 'nowhere'}, not from an installed "
            "package: run python/run-tests.sh (or pip install ./python, then pytest python/tests "
            "from the checkout's root)"
        )


@pytest.fixture(scope="session")
def cli() -> Path:
    """serq's CLI, built from this checkout."""
    given = os.environ.get("SERQ_BIN")
    if given:
        return Path(given)
    binary = REPO / "target" / "release" / "serq"
    if not binary.exists():
        subprocess.run(["cargo", "build", "--release", "--bin", "serq"], cwd=REPO, check=True)
    return binary


@pytest.fixture(scope="session")
def run_cli(cli):
    """`serq ARGS...`'s standard output, which must succeed."""

    def run(*args: str) -> str:
        done = subprocess.run([str(cli), *args], cwd=REPO, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    return run


def require_extra(module: str):
    """The optional module (an extra, or mypy), or a skip; with
    SERQ_REQUIRE_EXTRAS=1 (CI) a
    missing extra fails instead, so CI never passes by skipping."""
    try:
        return __import__(module)
    except ImportError:
        if os.environ.get("SERQ_REQUIRE_EXTRAS") == "1":
            raise
        pytest.skip(f"{module} is not installed (pip install './python[{module}]')")
