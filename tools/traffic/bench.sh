#!/usr/bin/env bash
# Issue 38's speed and memory checks for arrivals from a trace (a serq
# extension), with /usr/bin/time -v (wall clock and peak resident memory):
#
#   1. the whole Mooncake conversation trace (12 031 requests, one hour)
#      replayed on a vLLM-like engine (mooncake_vllm.sq): under 2 s;
#   2. a million-row serq CSV trace streamed (million.sq): peak memory
#      under 200 MB (the reader holds one row; the file is 19 MB).
#
# usage: tools/traffic/bench.sh [SERQ]   (default target/release/serq)
# The traces are read from ../shared/traces (SERQ_SHARED overrides it).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
serq=$(realpath "${1:-$root/target/release/serq}")
shared=${SERQ_SHARED:-$root/../shared}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
measure() { # label, command...
  local label=$1
  shift
  /usr/bin/time -v "$@" >"$tmp/out" 2>"$tmp/time" || { cat "$tmp/time"; exit 1; }
  head -1 "$tmp/out"
  printf '%s: wall %s, peak RSS %s kB\n' "$label" \
    "$(grep 'Elapsed (wall clock)' "$tmp/time" | awk '{print $NF}')" \
    "$(grep 'Maximum resident set size' "$tmp/time" | awk '{print $NF}')"
}
measure "mooncake 12031 requests" "$serq" run "$root/tools/traffic/mooncake_vllm.sq" \
  --arrival-trace "$shared/traces/mooncake_fast25_conversation.jsonl"
python3 - "$tmp/million.csv" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("time,new,out\n")
    for i in range(1_000_000):
        f.write(f"{i / 10},{100 + i % 900},{10 + i % 90}\n")
PY
measure "a million rows" "$serq" run "$root/tools/traffic/million.sq" --arrival-trace "$tmp/million.csv"
