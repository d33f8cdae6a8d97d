#!/usr/bin/env bash
# Times the two searches issue 36 asks to stay under 60 s on a 2-core
# machine, on examples/pd-disaggregation/slo.sq (TTFT <= 0.5 s and
# TPOT <= 50 ms for 90% of requests):
#   1. a cost search over ND = 1..8 at a fixed load (lam = 6, NP = 2);
#   2. a frontier over NP = 1..4 x ND = 1..8 with --load lam=0.5:12.
# Prints each search's header line (probes, undecided probes, runs) and its
# wall-clock and CPU times. Run from the checkout's root after
# `cargo build --release`. On a machine shared with builds, the CPU time
# (user + sys) is the figure to compare: wall-clock time measures the others.
set -euo pipefail
cd "$(dirname "$0")/../.."
SERQ=${SERQ:-target/release/serq}
PROGRAM=examples/pd-disaggregation/slo.sq
SLO=(--slo 'ttft<=0.5' --slo 'tpot<=0.05' --attain 0.9)
run() {
  local name=$1; shift
  local start end
  start=$(date +%s.%N)
  /usr/bin/time -f "$name: %e s wall, %U s user, %S s sys" "$SERQ" search "$PROGRAM" "$@" "${SLO[@]}" | head -1
  end=$(date +%s.%N)
}
run "ND=1..8 at lam=6" --at lam=6 --grid ND=1:8 --cost 'NP*8 + ND*8'
run "frontier NP=1..4 x ND=1..8" --load lam=0.5:12 --grid NP=1:4 --grid ND=1:8 --cost 'NP*8 + ND*8'
run "frontier, --monotone ND" --load lam=0.5:12 --grid NP=1:4 --grid ND=1:8 --monotone ND --cost 'NP*8 + ND*8'
