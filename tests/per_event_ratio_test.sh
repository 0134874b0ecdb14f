#!/usr/bin/env bash
# scripts/per-event-ratio: refuses bad input in one line naming it (exit 2),
# and one real round of the benchmark binary gives a row per benchmark with
# a time and a ratio.
#   tests/per_event_ratio_test.sh SOURCE_DIR LOCKSIM_BENCH
set -euo pipefail
src=$1 bench=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
refuses() {  # EXPECTED_TEXT ARGS...
  local text=$1
  shift
  if "$src/scripts/per-event-ratio" "$@" >"$tmp/out" 2>"$tmp/err"; then
    echo "FAIL: per-event-ratio $*: exit 0, expected 2"
    exit 1
  else
    rc=$?
    [ "$rc" -eq 2 ] || { echo "FAIL: per-event-ratio $*: exit $rc, expected 2"; exit 1; }
  fi
  grep -q -- "$text" "$tmp/err" || { echo "FAIL: per-event-ratio $*: no '$text' in:"; cat "$tmp/err"; exit 1; }
}
refuses "usage: scripts/per-event-ratio ROUNDS LOCKSIM_BENCH..."
refuses "ROUNDS: expected a whole number 1..100, got '0'" 0 "$bench"
refuses "ROUNDS: expected a whole number 1..100, got '101'" 101 "$bench"
refuses "ROUNDS: expected a whole number 1..100, got 'five'" five "$bench"
refuses "$tmp/none: not an executable file" 1 "$tmp/none"
"$src/scripts/per-event-ratio" 1 "$bench" >"$tmp/table" 2>"$tmp/err"
# One row per benchmark (the engine alone and four locks), each with a
# positive time and ratio.
rows=$(grep -c '^| BM_PerEventRatio/' "$tmp/table" || true)
[ "$rows" -eq 5 ] || { echo "FAIL: $rows rows, expected 5:"; cat "$tmp/table" "$tmp/err"; exit 1; }
if grep '^| BM_PerEventRatio/' "$tmp/table" | awk -F'|' '!($4 + 0 > 0 && $5 + 0 > 0) { bad = 1 } END { exit !bad }'; then
  echo "FAIL: a row without a positive time and ratio:"
  cat "$tmp/table"
  exit 1
fi
echo "per-event-ratio: refusals and one round ok"
