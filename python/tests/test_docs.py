"""The Python in README.md's Python section, python/README.md and
docs/python.md works as written: every ```python block runs from the checkout's root (blocks
marked ```python cluster need a Ray or Dask cluster and are left out)."""

import re

import pytest

from conftest import REPO


def python_blocks(path):
    text = path.read_text()
    return [
        (str(path.relative_to(REPO)), text.count("\n", 0, m.start()) + 1, m.group(1))
        for m in re.finditer(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    ]


BLOCKS = (
    python_blocks(REPO / "README.md")
    + python_blocks(REPO / "python" / "README.md")
    + python_blocks(REPO / "docs" / "python.md")
)


def test_the_docs_have_python_to_run():
    # Each README's example, and docs/python.md's API, errors, draws and study.
    names = [name for name, _, _ in BLOCKS]
    assert names.count("README.md") == names.count("python/README.md") == 1
    assert names.count("docs/python.md") >= 4


@pytest.mark.parametrize("name,line,code", BLOCKS, ids=[f"{n}:{l}" for n, l, _ in BLOCKS])
def test_a_python_block_runs_as_written(name, line, code, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    exec(compile(code, f"{name}:{line}", "exec"), {"__name__": "__docs__"})
