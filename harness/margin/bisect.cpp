#include "harness/margin/bisect.h"

#include <algorithm>
#include <stdexcept>

#include "env/assert.h"

namespace locksim::harness::margin {

int64_t resolution_at(const BisectRange& range, int64_t above) {
  // above / 100 * percent first: no overflow for any size below 2^63.
  const int64_t share =
      above / 100 * range.resolution_percent + above % 100 * range.resolution_percent / 100;
  return std::max(range.resolution_min, share);
}

Bisection bisect(const Probe& probe, const BisectRange& range) {
  if (range.lo < 0 || range.lo >= range.hi) {
    throw std::invalid_argument("bisect: expected 0 <= lo < hi");
  }
  if (range.resolution_min < 1 || range.resolution_percent < 0) {
    throw std::invalid_argument("bisect: expected a resolution of at least 1");
  }
  Bisection b;
  auto run = [&](int64_t size) {
    LOCKSIM_ASSERT_MSG(b.probes < kProbesMax, "a bisection ran past its probe bound");
    LOCKSIM_ASSERT(size >= range.lo && size <= range.hi);
    ++b.probes;
    return probe(size);
  };
  if (run(range.lo)) {
    b.outcome = Bisection::Outcome::kBreaksAtAnySize;
    b.above = range.lo;
    return b;
  }
  b.below = range.lo;
  if (!run(range.hi)) {
    b.outcome = Bisection::Outcome::kNeverBreaks;
    b.below = range.hi;
    return b;
  }
  b.above = range.hi;
  while (b.above - b.below > resolution_at(range, b.above)) {
    const int64_t mid = b.below + (b.above - b.below) / 2;
    LOCKSIM_ASSERT(mid > b.below && mid < b.above);
    if (run(mid)) {
      b.above = mid;
    } else {
      b.below = mid;
    }
  }
  // Both sides were seen: the pair bisect() promises.
  LOCKSIM_ASSERT(b.below >= range.lo && b.below < b.above && b.above <= range.hi);
  return b;
}

}  // namespace locksim::harness::margin
