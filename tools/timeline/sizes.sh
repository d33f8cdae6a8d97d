#!/usr/bin/env bash
# The size and the wall time of a whole-run timeline (`serq run
# --timeline`) on the two deployments docs/timeline.md quotes:
# examples/pd-disaggregation/nixl_pull.sq at its default size, and the
# 500 + 500 deployment (tools/bench/programs/pd_1000.sq) with
# `--horizon 10 --warmup 0`; each beside the same run without a timeline.
#
# usage: tools/timeline/sizes.sh [SERQ]   (default: target/release/serq)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
serq=$(realpath "${1:-$root/target/release/serq}")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$root"
seconds() { # the wall time of a command, in seconds
  local start end
  start=$(date +%s.%N)
  "$@" > /dev/null 2>&1
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
printf '%-58s %10s %12s %9s %9s\n' program events bytes "with s" "without s"
while read -r program args; do
  with=$(seconds "$serq" run "$program" $args --timeline "$out/t.json")
  without=$(seconds "$serq" run "$program" $args)
  bytes=$(stat -c %s "$out/t.json")
  events=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["traceEvents"]))' "$out/t.json")
  printf '%-58s %10s %12s %9.2f %9.2f\n' "$program $args" "$events" "$bytes" "$with" "$without"
done <<'LIST'
examples/pd-disaggregation/nixl_pull.sq
tools/bench/programs/pd_1000.sq --horizon 10 --warmup 0
examples/single-turn/vllm.sq
LIST
