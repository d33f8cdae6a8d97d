#!/usr/bin/env bash
# Builds the Python package from this checkout into a venv of its own
# (.venv-py at the checkout's root, git-ignored) with the extras its tests
# use (Ray, Dask, pandas, pytest, mypy), then runs its tests. serq's CLI,
# which the tests compare against, is target/release/serq (built here if
# missing). SERQ_REQUIRE_EXTRAS=1: a missing extra fails a test, never
# skips it. Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv-py/bin/python ]; then
  python3 -m venv .venv-py
fi
.venv-py/bin/python -m pip install --quiet --upgrade pip
.venv-py/bin/python -m pip install --quiet "./python[test,ray,dask,pandas]"
SERQ_REQUIRE_EXTRAS=1 .venv-py/bin/pytest python/tests "$@"
