#!/usr/bin/env bash
# Counts, out of SEEDS seeds, the runs in which a fixed partition-then-heal
# schedule (with DELAY=1: a fixed delay spike instead) finds a mutual-exclusion
# violation, for naive, GETSET, SET NX + Lua and Redlock. The same seeds and
# schedule ran on the datagram network (an older build) and on TCP
# connections: see docs/explanation/network.md.
#   scripts/np_before_after.sh BUILD_DIR [SEEDS] [EXTRA FLAGS...]
# Exit code of `locksim run`: 0 safe, 1 violation; anything else is an error.
set -euo pipefail
bin="$1/locksim"
seeds="${2:-200}"
shift 2 || true
for alg in naive-setnx getset-timestamp set-nx-lua redlock; do
  if [ "$alg" = redlock ]; then servers="redis-1,redis-2,redis-3,redis-4,redis-5"; else servers="redis-1"; fi
  faults=(--fault "partition c1|$servers at 5s for 20s")
  if [ "${DELAY:-0}" = 1 ]; then faults=(--fault "delay c1|$servers at 5s for 6s by 12s"); fi
  violations=0
  for seed in $(seq 1 "$seeds"); do
    rc=0
    "$bin" run --algorithm "$alg" --seed "$seed" --duration 60s "${faults[@]}" "$@" \
      >/dev/null 2>&1 || rc=$?
    if [ "$rc" = 1 ]; then violations=$((violations + 1)); elif [ "$rc" != 0 ]; then
      echo "error: $alg seed $seed exited $rc" >&2; exit 3; fi
  done
  echo "$alg $violations/$seeds"
done
