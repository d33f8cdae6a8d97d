#!/usr/bin/env python3
"""The engine's shape, as the owners review (issue 35) counted it.

Counts, over src/engine outside test modules and comments: point lookups
(`.get(` / `.get_mut(` on a query or the world), `lost(` arms, `as usize` and
`as u32` casts, functions taking the whole world (`&mut Sim`), the longest
functions and the structs with the most fields. Run from the repository root:
`python3 tools/engine/metrics.py`.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "src/engine")


def code_of(text: str) -> str:
    """The text without `#[cfg(test)] mod tests` and `//` comments."""
    i = text.find("#[cfg(test)]\nmod tests {")
    if i >= 0:
        text = text[:i]
    return "\n".join(line.split("//")[0] for line in text.splitlines())


def functions(code: str):
    """(name, lines) of each `fn` with a body, by brace matching."""
    out = []
    for m in re.finditer(r"\bfn\s+(\w+)", code):
        start = code.find("{", m.end())
        semi = code.find(";", m.end())
        if start < 0 or (0 <= semi < start):
            continue
        depth, i = 0, start
        while i < len(code):
            c = code[i]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        out.append((m.group(1), code[m.start() : i].count("\n") + 1))
    return out


def struct_fields(code: str):
    """(name, fields) of each braced struct."""
    out = []
    for m in re.finditer(r"\bstruct\s+(\w+)[^;{(]*\{", code):
        depth, i = 1, m.end()
        body_start = i
        while i < len(code) and depth:
            if code[i] == "{":
                depth += 1
            elif code[i] == "}":
                depth -= 1
            i += 1
        body = code[body_start : i - 1]
        top = []
        d = 0
        for line in body.splitlines():
            if d == 0 and re.match(r"\s*(pub(\([^)]*\))?\s+)?\w+\s*:", line):
                top.append(line)
            d += line.count("{") + line.count("<") - line.count("}") - line.count(">")
            d = max(d, 0)
        out.append((m.group(1), len(top)))
    return out


def main():
    files = sorted(ROOT.rglob("*.rs"))
    files = [f for f in files if f.name not in ("tests.rs", "proptests.rs")]
    counts = {"point lookups": 0, "lost arms": 0, "as usize": 0, "as u32": 0, "&mut Sim fns": 0}
    fns, structs = [], []
    for f in files:
        code = code_of(f.read_text())
        counts["point lookups"] += len(re.findall(r"\.(get|get_mut)\(\s*[\w.\[\]]*(e|entity|member|members|owner|session)", code))
        counts["lost arms"] += len(re.findall(r"\blost\(", code))
        counts["as usize"] += code.count("as usize")
        counts["as u32"] += code.count("as u32")
        counts["&mut Sim fns"] += len(re.findall(r"fn\s+\w+[^{;]*&mut\s+Sim\b", code))
        rel = f.relative_to(ROOT)
        fns += [(n, l, str(rel)) for n, l in functions(code)]
        structs += [(n, k, str(rel)) for n, k in struct_fields(code)]
    print(f"files: {len(files)}")
    for k, v in counts.items():
        print(f"{k}: {v}")
    print("longest functions:")
    for n, l, f in sorted(fns, key=lambda x: -x[1])[:8]:
        print(f"  {l:4} {f}::{n}")
    print("most fields:")
    for n, k, f in sorted(structs, key=lambda x: -x[1])[:6]:
        print(f"  {k:4} {f}::{n}")


main()
