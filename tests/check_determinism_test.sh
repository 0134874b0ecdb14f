#!/usr/bin/env bash
# The determinism lint must pass on this repository and must catch each kind
# of forbidden call when one is planted in simulated code (and only there).
set -euo pipefail
lint="$(cd "$(dirname "$0")/.." && pwd)/scripts/check-determinism"
"$lint" >/dev/null || { echo "FAIL: the lint rejects the repository itself"; exit 1; }

tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/sim" "$tree/live"
planted=(
  'auto t = std::chrono::steady_clock::now();'
  'auto t = std::chrono::system_clock::now();'
  'int x = rand();'
  'std::random_device rd;'
  'std::uniform_int_distribution<int> d(0, 9);'
  'boost::this_fiber::sleep_for(std::chrono::seconds(1));'
  # Two draws in one statement: their order is the compiler's choice.
  'e.jump = d.of_lease(0, 100, false) * (d.chance(50) ? 1 : -1);'
  'std::snprintf(buf, n, "%llx%llx", env.random(), env.random());'
  'FaultEvent e = event(kCrash, d.time(5, 80), d.pick(servers));'
)
for line in "${planted[@]}"; do
  printf '%s\n' "$line" > "$tree/sim/bad.cpp"
  if "$lint" "$tree" >/dev/null 2>&1; then
    echo "FAIL: the lint missed: $line"
    exit 1
  fi
done
rm "$tree/sim/bad.cpp"
# A conditional draws its condition first: sequenced, so allowed.
printf '%s\n' 'if (d.chance(10)) node = d.pick(servers);' > "$tree/sim/ok.cpp"
"$lint" "$tree" >/dev/null || { echo "FAIL: the lint flagged a sequenced if (draw) draw"; exit 1; }
rm "$tree/sim/ok.cpp"
# Live code talks to real servers with real time: exempt.
printf '%s\n' 'auto t = std::chrono::steady_clock::now();' > "$tree/live/ok.cpp"
"$lint" "$tree" >/dev/null || { echo "FAIL: the lint flagged live/"; exit 1; }
echo "check-determinism: catches all ${#planted[@]} planted calls, exempts live/"
