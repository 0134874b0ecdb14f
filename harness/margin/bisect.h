// Bisection over a fault's size: the smallest size at which a probe says the
// lock failed, to 1 % of that size (or a floor, whichever is larger), with
// both sides of the answer confirmed by a probe.
//
// Why its own module, with the probe a plain function: a probe is a whole
// simulated run, so the search is tested against a planted boundary (a fake
// probe) in microseconds, and the same search serves every fault kind.
// It assumes the probe is monotone on the range (broken at a size means
// broken at every larger one); it never checks that, it only trusts the two
// sizes it reports, which it has seen.
#pragma once

#include <cstdint>
#include <functional>

namespace locksim::harness::margin {

// True when the lock failed to protect its holder under a fault of `size`
// (in the caller's unit: nanoseconds, ppm...). Called at most
// kProbesMax times by one bisect(), sizes inside [lo, hi] only.
using Probe = std::function<bool(int64_t size)>;

struct BisectRange {
  int64_t lo = 0;  // the smallest size searched (may be 0: no fault)
  int64_t hi = 0;  // the largest; lo < hi
  // The answer's width: above - below <= max(resolution_min, above *
  // resolution_percent / 100). 1 % by default: the bar for
  // agreeing with theory; the floor keeps a tiny margin from costing
  // probes below what the simulation can tell apart (1 ms for durations).
  int64_t resolution_min = 1;
  int64_t resolution_percent = 1;
};

struct Bisection {
  enum class Outcome {
    kFound,            // below shows no failure, above shows one
    kBreaksAtAnySize,  // range.lo already fails: above == lo, below unset
    kNeverBreaks,      // range.hi does not fail: below == hi, above unset
  };
  Outcome outcome = Outcome::kFound;
  int64_t below = -1;  // the largest size probed that did not fail (-1: none)
  int64_t above = -1;  // the smallest size probed that failed (-1: none)
  int probes = 0;      // probes run, both ends included
};

// A range is searched in at most this many probes: 2 ends plus halvings of
// 2^62 down to 1 fit in 64, so the bound is never what stops a search.
inline constexpr int kProbesMax = 64;

// Probes range.lo, then range.hi, then halves [below, above] until it is
// within the resolution. Throws std::invalid_argument for lo >= hi, a
// negative lo or a resolution below 1 (the caller validates user input).
Bisection bisect(const Probe& probe, const BisectRange& range);

// The width bisect() stops at for a failing size `above`.
int64_t resolution_at(const BisectRange& range, int64_t above);

}  // namespace locksim::harness::margin
