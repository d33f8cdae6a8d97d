#!/usr/bin/env bash
# Runs `serq run --json` with two binaries over every program file the
# project keeps (examples, conformance cases, bench programs) and diffs the
# reports, exit codes and error text: an engine change that must keep every
# report's digits passes only if this prints no difference.
#
# usage: tools/reports/same.sh BEFORE_SERQ AFTER_SERQ [FILE.sq ...]
#
# SERQ_SAME_DROP=warnings (a comma-separated list of top-level fields)
# drops those fields of both reports, and the `warning:` lines of both
# stderrs, before comparing: for a change that adds a field on purpose.
set -u
before=$(realpath "$1") after=$(realpath "$2")
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
shared=${SERQ_SHARED:-$root/../shared}
if [ $# -eq 0 ]; then
  set -- "$root"/examples/*/*.sq "$root"/tests/conformance/*.sq \
    "$shared"/conformance/cases/*.sq "$shared"/conformance/t2/*.sq \
    "$shared"/bench/*.sq "$root"/tools/bench/programs/*.sq "$root"/tests/serving/*.sq
fi
drop=${SERQ_SAME_DROP:-}
# Drops the fields of $drop from the JSON report in file $1 (in place).
normalise() {
  [ -n "$drop" ] || return 0
  python3 - "$1" "$drop" <<'PY'
import json, sys
path, fields = sys.argv[1], sys.argv[2].split(",")
try:
    report = json.load(open(path))
except ValueError:
    sys.exit(0)
for f in fields:
    report.pop(f, None)
open(path, "w").write(json.dumps(report))
PY
  grep -v '^warning: ' "$1.err" >"$1.err2"; mv "$1.err2" "$1.err"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
same=0 differ=0
for f in "$@"; do
  [ -f "$f" ] || continue
  (cd "$(dirname "$f")" && "$before" run --json "$(basename "$f")" >"$tmp/a" 2>"$tmp/a.err"; echo "exit $?" >>"$tmp/a.err")
  (cd "$(dirname "$f")" && "$after" run --json "$(basename "$f")" >"$tmp/b" 2>"$tmp/b.err"; echo "exit $?" >>"$tmp/b.err")
  normalise "$tmp/a"
  normalise "$tmp/b"
  if cmp -s "$tmp/a" "$tmp/b" && cmp -s "$tmp/a.err" "$tmp/b.err"; then
    same=$((same + 1))
  else
    differ=$((differ + 1))
    echo "DIFFERS: $f"
    diff "$tmp/a" "$tmp/b" | head -5
    diff "$tmp/a.err" "$tmp/b.err" | head -5
  fi
done
echo "$same identical, $differ different"
[ "$differ" -eq 0 ]
