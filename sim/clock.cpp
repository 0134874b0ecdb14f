#include "sim/clock.h"

#include <cassert>

namespace locksim::sim {

TimePoint LocalClock::local(TimePoint true_now) const {
  const int64_t delta_ns = true_now.ns - base_true_.ns;
  // 128-bit so a long run at high drift cannot overflow the product.
  const Int128 skew = static_cast<Int128>(delta_ns) * drift_ppm_ / 1'000'000;
  return TimePoint{base_local_.ns + delta_ns + static_cast<int64_t>(skew)};
}

void LocalClock::set_drift(TimePoint true_now, int64_t drift_ppm) {
  assert(drift_ppm > -1'000'000 && drift_ppm < 1'000'000);
  base_local_ = local(true_now);
  base_true_ = true_now;
  drift_ppm_ = drift_ppm;
}

void LocalClock::jump(TimePoint true_now, Duration by) {
  base_local_ = local(true_now) + by;
  base_true_ = true_now;
}

}  // namespace locksim::sim
