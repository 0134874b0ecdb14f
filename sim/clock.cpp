#include "sim/clock.h"

#include <limits>

#include "env/assert.h"

namespace locksim::sim {

TimePoint LocalClock::local(TimePoint true_now) const {
  // True time only moves forward, and the line was last rebased at a true
  // time already reached: reading before it would extrapolate backwards.
  LOCKSIM_ASSERT_MSG(true_now >= base_true_, "a clock read before its last change");
  const int64_t delta_ns = true_now.ns - base_true_.ns;
  // Exact at any length and drift (mul_div); a clock without drift (most of
  // them) skips the division.
  const int64_t skew = drift_ppm_ == 0 ? 0 : mul_div(delta_ns, drift_ppm_, 1'000'000);
  const TimePoint local{base_local_.ns + delta_ns + skew};
  // |drift| < 100% makes the rate positive: between changes local time
  // never goes back (only jump() steps it, and it rebases).
  LOCKSIM_ASSERT_MSG(local >= base_local_, "local time went back without a jump");
  return local;
}

TimePoint LocalClock::true_when(TimePoint target, TimePoint true_now) const {
  if (local(true_now) >= target) return true_now;
  // Invert the line, then settle the rounding of local()'s integer skew: the
  // answer is the first nanosecond whose reading reaches `target`.
  const Int128 behind_ns = static_cast<Int128>(target.ns) - base_local_.ns;
  // Positive: local(true_now), never before base_local_, is short of target.
  LOCKSIM_ASSERT(behind_ns > 0);
  // The product in 64 bits while it fits (a target under 2.5 hours past the
  // line's base, nearly always), as in mul_div: the same quotient, without a
  // call into libgcc for a 128-bit division on every question.
  constexpr int64_t kScalableMax = std::numeric_limits<int64_t>::max() / 1'000'000;
  const Int128 delta_ns =
      drift_ppm_ == 0 ? behind_ns
      : behind_ns <= kScalableMax
          ? Int128{static_cast<int64_t>(behind_ns) * 1'000'000 / (1'000'000 + drift_ppm_)}
          : behind_ns * 1'000'000 / (1'000'000 + drift_ppm_);
  if (delta_ns > Duration::max().ns - base_true_.ns) return TimePoint{Duration::max().ns};
  TimePoint t{base_true_.ns + static_cast<int64_t>(delta_ns)};
  if (drift_ppm_ == 0) {
    // Without drift the line has slope 1: the inversion is exact, and the
    // rounding steps below would each re-read the clock for nothing (a
    // Redlock run asks this after every event of a hold, once per master).
    // Pair of the early return: a reading short of `target` now ends later,
    // and with slope 1 the first nanosecond to reach it reads it exactly.
    LOCKSIM_ASSERT(t > true_now && local(t) == target);
    return t;
  }
  if (t < true_now) t = true_now;
  while (local(t) < target) t.ns += 1;
  while (t > true_now && local(TimePoint{t.ns - 1}) >= target) t.ns -= 1;
  LOCKSIM_ASSERT(t >= true_now && local(t) >= target);
  return t;
}

void LocalClock::set_drift(TimePoint true_now, int64_t drift_ppm) {
  // The nemesis rejects anything else as bad input (exit 2) before a run.
  LOCKSIM_ASSERT_MSG(drift_ppm > -1'000'000 && drift_ppm < 1'000'000, "drift out of range");
  base_local_ = local(true_now);
  base_true_ = true_now;
  drift_ppm_ = drift_ppm;
  changes_.bump();
}

void LocalClock::jump(TimePoint true_now, Duration by) {
  base_local_ = local(true_now) + by;
  base_true_ = true_now;
  changes_.bump();
}

}  // namespace locksim::sim
