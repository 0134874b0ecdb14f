#!/usr/bin/env bash
# Acceptance check for faults-in-the-history : every shipped
# scenario's history from NEW_LOCKSIM equals the one from OLD_LOCKSIM (a build
# from before nemesis ops existed) once the nemesis ops are dropped and the
# rest re-indexed; and the verdict line of result.json is unchanged.
#   tests/nemesis_history_compat.sh OLD_LOCKSIM NEW_LOCKSIM [SEED]
# Not a ctest test: it needs a second, older build. Exit 0 when every
# scenario matches; prints one line per scenario.
set -euo pipefail
old=$1 new=$2 seed=${3:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Drops nemesis ops and renumbers the rest from 0, in EDN or JSON lines.
strip_edn() {
  grep -v ':process :nemesis' "$1" | awk '{ sub(/:index [0-9]+/, ":index " NR - 1); print }'
}
strip_jsonl() {
  grep -v '"process":"nemesis"' "$1" | awk '{ sub(/"index":[0-9]+/, "\"index\":" NR - 1); print }'
}

scenarios=$("$new" list | sed -n '/^Scenarios/,$p' | awk 'NR > 1 && NF { print $1 }')
[ -n "$scenarios" ] || { echo "no scenarios listed" >&2; exit 2; }
failed=0
for s in $scenarios; do
  for b in old new; do
    bin=$old; [ $b = new ] && bin=$new
    rc=0; "$bin" run --scenario "$s" --seed "$seed" --out "$work/$b/$s" --quiet || rc=$?
    [ $rc -le 1 ] || { echo "$s: $b binary exited $rc" >&2; exit 2; }
  done
  o=$work/old/$s n=$work/new/$s
  nemesis=$(grep -c ':process :nemesis' "$n/history.edn" || true)
  verdict() { grep -m1 '"verdict"' "$1/result.json"; }
  if cmp -s "$o/history.edn" <(strip_edn "$n/history.edn") &&
     cmp -s "$o/history.jsonl" <(strip_jsonl "$n/history.jsonl") &&
     [ "$(verdict "$o")" = "$(verdict "$n")" ]; then
    echo "same  $s: $(wc -l < "$o/history.edn") client ops identical, +$nemesis nemesis ops"
  else
    echo "DIFF  $s"
    diff <(cat "$o/history.jsonl") <(strip_jsonl "$n/history.jsonl") | head -5 || true
    failed=1
  fi
done
exit $failed
