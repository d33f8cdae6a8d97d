#!/usr/bin/env bash
# Runs two serq binaries on every program of examples/, tests/conformance/
# and ../shared/conformance/cases/ (or the folders given after the binaries)
# and reports any difference in `serq run --json` output, stderr or exit
# status: a change that must keep every report's digits passes with
# "0 differ".
#   tools/bench/same_reports.sh OLD_SERQ NEW_SERQ [DIR ...]
set -u
old=$(realpath "$1") new=$(realpath "$2")
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
dirs=("$@")
[ ${#dirs[@]} -eq 0 ] && dirs=("$root/examples" "$root/tests/conformance" "$root/../shared/conformance/cases")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 differ=0
while IFS= read -r f; do
    n=$((n + 1))
    (cd "$(dirname "$f")" && "$old" run --json "$f" >"$tmp/a.out" 2>"$tmp/a.err"; echo $? >>"$tmp/a.out")
    (cd "$(dirname "$f")" && "$new" run --json "$f" >"$tmp/b.out" 2>"$tmp/b.err"; echo $? >>"$tmp/b.out")
    if ! cmp -s "$tmp/a.out" "$tmp/b.out" || ! cmp -s "$tmp/a.err" "$tmp/b.err"; then
        differ=$((differ + 1))
        echo "differs: $f"
    fi
done < <(find "${dirs[@]}" -name '*.sq' | sort)
echo "$n programs, $differ differ"
[ "$differ" -eq 0 ]
