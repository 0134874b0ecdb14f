#include "sim/clock.h"

#include "env/assert.h"

namespace locksim::sim {

TimePoint LocalClock::local(TimePoint true_now) const {
  // True time only moves forward, and the line was last rebased at a true
  // time already reached: reading before it would extrapolate backwards.
  LOCKSIM_ASSERT_MSG(true_now >= base_true_, "a clock read before its last change");
  const int64_t delta_ns = true_now.ns - base_true_.ns;
  // 128-bit so a long run at high drift cannot overflow the product.
  const Int128 skew = static_cast<Int128>(delta_ns) * drift_ppm_ / 1'000'000;
  const TimePoint local{base_local_.ns + delta_ns + static_cast<int64_t>(skew)};
  // |drift| < 100% makes the rate positive: between changes local time
  // never goes back (only jump() steps it, and it rebases).
  LOCKSIM_ASSERT_MSG(local >= base_local_, "local time went back without a jump");
  return local;
}

void LocalClock::set_drift(TimePoint true_now, int64_t drift_ppm) {
  // The nemesis rejects anything else as bad input (exit 2) before a run.
  LOCKSIM_ASSERT_MSG(drift_ppm > -1'000'000 && drift_ppm < 1'000'000, "drift out of range");
  base_local_ = local(true_now);
  base_true_ = true_now;
  drift_ppm_ = drift_ppm;
}

void LocalClock::jump(TimePoint true_now, Duration by) {
  base_local_ = local(true_now) + by;
  base_true_ = true_now;
}

}  // namespace locksim::sim
