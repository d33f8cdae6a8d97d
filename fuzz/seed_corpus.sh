#!/usr/bin/env bash
# Seeds fuzz/corpus/<target>/ from the example programs and the conformance
# cases (the corpus is git-ignored). ir_validate is seeded with the IR JSON
# of every program that links, written by a release build of `serq ir`.
set -euo pipefail
cd "$(dirname "$0")/.."
# tests/conformance/t2 and tests/serving hold the serving engine's cases, tests/fixtures
# libraries and traces.
sources=$(find examples tests/conformance tests/fixtures tests/serving -name '*.sq' | sort)
for target in parse_link run_bounded; do
  mkdir -p "fuzz/corpus/$target"
  for f in $sources; do
    cp "$f" "fuzz/corpus/$target/$(echo "$f" | tr '/' '_')"
  done
done
mkdir -p fuzz/corpus/ir_validate
cargo build --release --quiet --bin serq
for f in $sources; do
  out="fuzz/corpus/ir_validate/$(echo "${f%.sq}" | tr '/' '_').json"
  target/release/serq ir "$f" > "$out" 2>/dev/null || rm -f "$out"
done
find tests -name '*.json' -path '*ir*' -exec cp {} fuzz/corpus/ir_validate/ \; 2>/dev/null || true
mkdir -p fuzz/corpus/trace_parse
for f in $(find tests/fixtures tests/conformance tests/serving -name '*.csv' | sort); do
  cp "$f" "fuzz/corpus/trace_parse/$(echo "$f" | tr '/' '_')"
done
echo "seeded: $(ls fuzz/corpus/parse_link | wc -l) sources, $(ls fuzz/corpus/ir_validate | wc -l) IR files, $(ls fuzz/corpus/trace_parse | wc -l) traces"
