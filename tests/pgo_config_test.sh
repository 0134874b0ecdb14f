#!/usr/bin/env bash
# The profile-guided build's settings (CMakeLists.txt, LOCKSIM_PGO;
# scripts/build-pgo) refuse what they cannot do, in one line naming the
# setting: an unknown mode, "use" without a profile, a stray argument. The
# whole two-build run is not repeated here (two Release builds: see
# docs/HACKING.md, "The fastest build").
set -euo pipefail
src="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
expect_refusal() {  # WHAT EXPECTED_TEXT CMAKE_ARGS...
  local what=$1 text=$2
  shift 2
  # gcc: the one compiler LOCKSIM_PGO takes, so the refusal is about the mode.
  if cmake -S "$src" -B "$tmp/b-$what" -DCMAKE_CXX_COMPILER=g++ -DLOCKSIM_TESTS=OFF -DLOCKSIM_BENCH=OFF "$@" \
    >"$tmp/out" 2>&1; then
    echo "FAIL: $what: configured, expected a refusal"
    exit 1
  fi
  grep -q -- "$text" "$tmp/out" || { echo "FAIL: $what: no '$text' in:"; cat "$tmp/out"; exit 1; }
}
expect_refusal bogus-mode "LOCKSIM_PGO: expected empty, generate or use, got 'fast'" -DLOCKSIM_PGO=fast
expect_refusal use-without-profile "LOCKSIM_PGO=use: no profile at $tmp/none" \
  -DLOCKSIM_PGO=use -DLOCKSIM_PGO_DIR="$tmp/none"
if "$src/scripts/build-pgo" a b >"$tmp/out" 2>&1; then
  echo "FAIL: build-pgo took two arguments"
  exit 1
else
  rc=$?
  [ "$rc" -eq 2 ] || { echo "FAIL: build-pgo a b: exit $rc, expected 2"; exit 1; }
fi
grep -q "usage: scripts/build-pgo" "$tmp/out" || { echo "FAIL: build-pgo a b: no usage line"; exit 1; }
echo "ok"
