#include "harness/shrink/search.h"

#include <algorithm>

#include "env/assert.h"

namespace locksim::harness::shrink {

namespace {

// `items` cut into `n` contiguous chunks whose sizes differ by at most one,
// the longer first (Zeller's split).
std::vector<std::vector<size_t>> split(const std::vector<size_t>& items, size_t n) {
  LOCKSIM_ASSERT(n >= 1 && n <= items.size());
  std::vector<std::vector<size_t>> chunks(n);
  const size_t base = items.size() / n;
  const size_t longer = items.size() % n;
  size_t next = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t size = base + (i < longer ? 1 : 0);
    chunks[i].assign(items.begin() + static_cast<ptrdiff_t>(next),
                     items.begin() + static_cast<ptrdiff_t>(next + size));
    next += size;
  }
  LOCKSIM_ASSERT(next == items.size());  // every item in exactly one chunk
  return chunks;
}

std::vector<size_t> without(const std::vector<size_t>& items, const std::vector<size_t>& chunk) {
  std::vector<size_t> out;
  for (size_t i : items) {
    if (!std::binary_search(chunk.begin(), chunk.end(), i)) out.push_back(i);
  }
  return out;
}

}  // namespace

std::vector<size_t> ddmin(size_t n, const SubsetFails& fails) {
  if (n == 0) return {};
  if (fails({})) return {};
  std::vector<size_t> kept(n);
  for (size_t i = 0; i < n; ++i) kept[i] = i;
  size_t granularity = 2;
  // Each turn either drops at least one item or doubles the granularity up to
  // the items left, so the loop ends; the bound only states it.
  const size_t turns_max = 4 * n * n + 8;
  for (size_t turn = 0; kept.size() >= 2; ++turn) {
    LOCKSIM_ASSERT_MSG(turn < turns_max, "ddmin makes progress every turn");
    granularity = std::min(granularity, kept.size());
    const auto chunks = split(kept, granularity);
    bool reduced = false;
    for (const auto& chunk : chunks) {  // reduce to a subset
      if (!fails(chunk)) continue;
      kept = chunk;
      granularity = 2;
      reduced = true;
      break;
    }
    if (reduced) continue;
    // Reduce to a complement (with two chunks, each complement is the other
    // chunk, already asked about).
    for (size_t i = 0; granularity > 2 && i < chunks.size(); ++i) {
      std::vector<size_t> rest = without(kept, chunks[i]);
      if (!fails(rest)) continue;
      kept = std::move(rest);
      granularity = std::max<size_t>(granularity - 1, 2);
      reduced = true;
      break;
    }
    if (reduced) continue;
    if (granularity >= kept.size()) break;  // every single removal was asked: 1-minimal
    granularity = std::min(granularity * 2, kept.size());
  }
  LOCKSIM_ASSERT(std::is_sorted(kept.begin(), kept.end()));
  return kept;
}

int64_t smallest_failing(int64_t lo, int64_t hi, int64_t step, const ValueFails& fails) {
  LOCKSIM_ASSERT(lo <= hi && step > 0);
  // Grid point k: lo + k * step, and the last one (k == last) is hi itself.
  const int64_t last = (hi - lo + step - 1) / step;
  auto value = [&](int64_t k) { return k == last ? hi : lo + k * step; };
  int64_t low = 0, high = last;  // value(high) fails; none below `low` was seen failing
  while (low < high) {
    const int64_t mid = low + (high - low) / 2;
    if (fails(value(mid))) {
      high = mid;
    } else {
      low = mid + 1;
    }
  }
  LOCKSIM_ASSERT(value(high) >= lo && value(high) <= hi);
  return value(high);
}

int64_t largest_failing(int64_t lo, int64_t hi, int64_t step, const ValueFails& fails) {
  LOCKSIM_ASSERT(lo <= hi && step > 0);
  const int64_t v = -smallest_failing(-hi, -lo, step, [&](int64_t x) { return fails(-x); });
  LOCKSIM_ASSERT(v >= lo && v <= hi);
  return v;
}

}  // namespace locksim::harness::shrink
