// Real time, for work that runs outside the simulation: a subprocess's time
// limit (Knossos), how long it took. The determinism lint exempts this file
// and checkers/knossos.cpp by name (as it does all of live/): simulated code
// (sim/, algorithms/, faults/, and the harness's simulated runs) must never
// include it, because a value read here would differ between two replays of
// the same seed.
#pragma once

#include <chrono>
#include <cstdint>

#include "env/assert.h"

namespace locksim::checkers {

// A wall-clock budget started at construction.
class WallDeadline {
 public:
  // Precondition (asserted): limit_ns > 0.
  explicit WallDeadline(int64_t limit_ns)
      : start_(Clock::now()), end_(start_ + std::chrono::nanoseconds(limit_ns)) {
    LOCKSIM_ASSERT(limit_ns > 0);
  }

  // Milliseconds left; <= 0 once the budget is spent.
  int64_t remaining_ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(end_ - Clock::now()).count();
  }
  // Seconds since construction.
  double elapsed_seconds() const {
    return std::chrono::duration<double>(Clock::now() - start_).count();
  }

 private:
  // steady_clock: never jumps, so a budget is neither cut short nor stretched.
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
  Clock::time_point end_;
};

}  // namespace locksim::checkers
