#!/usr/bin/env bash
# scripts/instruction-ratio: refuses bad input in one line naming it (exit
# 2; a build without the part benchmarks too), and a real count of a build
# gives the engine alone, the four locks and the denominator, each lock
# dearer an event than the engine alone, and a
# second count within 0.5 % of the first (a count, not a time: only where
# the allocator puts things moves it, by an instruction or two an event).
# Needs valgrind: without it the test skips (exit 77), except in CI
# (CI=true).
#   tests/instruction_ratio_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
refuses() {  # EXPECTED_TEXT ARGS...
  local text=$1 rc=0
  shift
  "$src/scripts/instruction-ratio" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" -eq 2 ] || { echo "FAIL: instruction-ratio $*: exit $rc, expected 2"; exit 1; }
  grep -q -- "$text" "$tmp/err" || { echo "FAIL: instruction-ratio $*: no '$text' in:"; cat "$tmp/err"; exit 1; }
}
refuses "usage: scripts/instruction-ratio BUILD_DIR"
refuses "usage: scripts/instruction-ratio BUILD_DIR" "$build" extra
refuses "$tmp/none/locksim: not an executable file" "$tmp/none"
if ! command -v valgrind >/dev/null; then
  [ "${CI:-}" != true ] || { echo "FAIL: valgrind is required in CI (scripts/setup installs it)"; exit 1; }
  echo "instruction-ratio: refusals ok; valgrind not installed, the count is skipped"
  exit 77
fi
# A build from before the part benchmarks: its locksim_bench lists none.
mkdir "$tmp/old"
printf '#!/bin/sh\nexit 0\n' >"$tmp/old/locksim"
cp "$tmp/old/locksim" "$tmp/old/locksim_bench"
chmod +x "$tmp/old/locksim" "$tmp/old/locksim_bench"
refuses "has no two sizes of BM_RatioPart_PushPop (build it from this checkout)" "$tmp/old"
"$src/scripts/instruction-ratio" "$build" >"$tmp/table" 2>"$tmp/err" ||
  { echo "FAIL: instruction-ratio $build:"; cat "$tmp/err"; exit 1; }
"$src/scripts/instruction-ratio" "$build" >"$tmp/again" 2>"$tmp/err"
python3 - "$tmp/table" "$tmp/again" <<'PY'
import sys
def table(path):
    rows = {}
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] not in ("run", "---"):
            rows[cells[0]] = cells
    return rows
rows, again = table(sys.argv[1]), table(sys.argv[2])
want = ["the engine alone (engine_only)", "set-nx-lua", "redlock", "mysql-center", "zk-curator"]
missing = [w for w in want if w not in rows]
if missing or "the denominator: a push + pop, a switch" not in rows:
    sys.exit(f"FAIL: rows missing {missing} in:\n" + open(sys.argv[1]).read())
ratio = {w: float(rows[w][2]) for w in want}
if min(ratio.values()) <= 0 or any(float(rows[w][1]) <= 0 for w in want):
    sys.exit("FAIL: a row without a positive count and ratio:\n" + open(sys.argv[1]).read())
engine = ratio.pop(want[0])
dearer = [w for w, r in ratio.items() if r <= engine]
if dearer:
    sys.exit(f"FAIL: {dearer} no dearer an event than the engine alone ({engine}):\n"
             + open(sys.argv[1]).read())
parts = [float(x) for x in rows["the denominator: a push + pop, a switch"][1].split(",")]
if len(parts) != 2 or min(parts) <= 0:
    sys.exit("FAIL: the denominator's two parts are not both positive")
for name, cells in rows.items():
    first = [float(x) for x in cells[1].split(",")]
    second = [float(x) for x in again.get(name, ["", "0"])[1].split(",")]
    if len(first) != len(second) or any(abs(a - b) > 0.005 * a for a, b in zip(first, second)):
        sys.exit(f"FAIL: {name}: {cells[1]}, then {again.get(name)}: more than 0.5 % apart")
PY
echo "instruction-ratio: refusals, a count and its repeat ok"
