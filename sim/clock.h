// A node's local clock: what the node believes the time is.
//
// local(t) = base_local + (t - base_true) * (1 + drift_ppm / 1e6), piecewise:
// every drift change or jump rebases the line at the true time it happens, so
// the clock stays continuous under drift changes and steps exactly by the jump.
// Servers judge key expiry with it and clients compute lease validity with it,
// which is how drift and jumps reach the algorithms.
#pragma once

#include <cstdint>

#include "env/time.h"
#include "sim/change_count.h"

namespace locksim::sim {

// Local clocks start near this Unix time (2023-11-14), so absolute expiry
// values look like real Redis ones and fit the same integer ranges.
inline constexpr TimePoint kLocalEpoch = TimePoint{1'700'000'000'000'000'000};

class LocalClock {
 public:
  explicit LocalClock(Duration offset = Duration::zero()) : base_local_(kLocalEpoch + offset) {}

  // Precondition: true_now is not before the last set_drift/jump (true time
  // only moves forward). Between changes, the result never goes back.
  TimePoint local(TimePoint true_now) const;

  // The earliest true time, not before `true_now`, at which local() reads at
  // least `target` if nothing changes the clock meanwhile (the instant a
  // server's key expires); saturates at TimePoint{Duration::max().ns}. Same
  // precondition as local().
  TimePoint true_when(TimePoint target, TimePoint true_now) const;

  // From `true_now` on, run fast (ppm > 0) or slow (ppm < 0). |ppm| < 1e6.
  void set_drift(TimePoint true_now, int64_t drift_ppm);
  // Step the clock by `by` (negative: backwards) at `true_now`.
  void jump(TimePoint true_now, Duration by);

  int64_t drift_ppm() const { return drift_ppm_; }
  // Bumped by every set_drift and jump: once attached to a World
  // (Node does), a reader that cached something computed from the clock
  // (the exposure monitor's answer) knows it still holds while the World's
  // state_changes() stands still.
  ChangeCount& change_count() { return changes_; }

 private:
  TimePoint base_true_{};
  TimePoint base_local_;
  int64_t drift_ppm_ = 0;
  ChangeCount changes_;
};

}  // namespace locksim::sim
