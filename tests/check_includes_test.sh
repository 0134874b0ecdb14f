#!/usr/bin/env bash
# The include rules must pass on this repository and must catch a checker
# that reaches into the simulation, and an env/ header that reaches up.
set -euo pipefail
src="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
lint="$src/scripts/check-includes"
"$lint" "$src" >/dev/null || { echo "FAIL: the include rules reject the repository itself"; exit 1; }

tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/checkers" "$tree/env" "$tree/cli"
planted=(
  'checkers/bad.h:#include "sim/world.h"'
  'checkers/bad.h:#include "harness/run_config.h"'
  'env/bad.h:#include "history/history.h"'
  'history/bad.h:#include "checkers/mutex_checker.h"'
)
for entry in "${planted[@]}"; do
  file=${entry%%:*}
  mkdir -p "$tree/$(dirname "$file")"
  printf '%s\n' "${entry#*:}" > "$tree/$file"
  if (cd "$tree" && "$lint" "$tree") >/dev/null 2>&1; then
    echo "FAIL: the include rules missed $entry"
    exit 1
  fi
  rm "$tree/$file"
done
# The command line may include anything.
printf '%s\n' '#include "live/live_env.h"' > "$tree/cli/ok.cpp"
(cd "$tree" && "$lint" "$tree") >/dev/null || { echo "FAIL: the rules flagged cli/"; exit 1; }
echo "check-includes: catches all ${#planted[@]} planted includes, allows cli/ everything"
