// A live client's clock under clock faults (`jump c2 at 0s +9s`, `drift c1
// at 5s +50000ppm`): the client's Env adds skew_ns() to its own reading, so
// the algorithm's now() (a Redlock validity, a MySQL deadline) moves as the
// fault says, and nothing else does (the servers and the history keep real
// time). The same arithmetic as the servers' clock shim
// (live/clock_shim/clock_control_block.h), kept on the steady clock.
//
// Threads: every function may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

#include "env/assert.h"
#include "env/time.h"
#include "live/clock_shim/clock_control_block.h"

namespace locksim::live {

class ClientClock {
 public:
  // How far the client's clock is ahead of the real one (negative: behind)
  // at the steady clock's reading `steady_ns`.
  int64_t skew_ns(int64_t steady_ns) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return fake_clock_ns(block_, steady_ns) - steady_ns;
  }
  // Steps the client's clock by `by` now.
  void jump(Duration by) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const int64_t now = steady_ns();
    block_.anchor_fake_ns = fake_clock_ns(block_, now) + by.ns;
    block_.anchor_real_ns = now;
  }
  // From now on the client's clock runs (1e6 + ppm) / 1e6 as fast.
  void set_drift(int64_t ppm) {
    LOCKSIM_ASSERT(ppm > -1'000'000 && ppm < 1'000'000);
    const std::lock_guard<std::mutex> lock(mutex_);
    const int64_t now = steady_ns();
    block_.anchor_fake_ns = fake_clock_ns(block_, now);
    block_.anchor_real_ns = now;
    block_.rate_ppm = ppm;
  }
  static int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

 private:
  mutable std::mutex mutex_;
  ClockControlBlock block_{kClockControlMagic, 0, 0, 0, 0};  // the real clock
};

}  // namespace locksim::live
