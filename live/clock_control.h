// locksim's side of the clock shim (live/clock_shim/): the control file a
// shimmed server maps, and the faults that move its clock.
//
// Threads: jump() and set_drift() may be called from any thread; one writer
// at a time (a mutex), readers (the server's threads) never wait.
#pragma once

#include <mutex>
#include <string>

#include "env/time.h"
#include "live/clock_shim/clock_control_block.h"

namespace locksim::live {

class ClockControl {
 public:
  // Creates the control file `path` (a real clock: no offset, no drift) and
  // maps it. Throws std::runtime_error naming the path.
  explicit ClockControl(std::string path);
  ~ClockControl();  // unmaps; the file stays with its folder
  ClockControl(const ClockControl&) = delete;
  ClockControl& operator=(const ClockControl&) = delete;

  const std::string& path() const { return path_; }

  // Steps the server's wall clock by `by` (negative: back).
  void jump(Duration by);
  // From now on the server's wall clock runs (1e6 + ppm) / 1e6 as fast.
  // Precondition: ppm in (-1e6, 1e6).
  void set_drift(int64_t ppm);
  // What the server's wall clock reads now, in ns since the epoch (tests).
  int64_t fake_now_ns() const;

 private:
  // Re-anchors at the real time now, with `fake` and `ppm`, under the seqlock.
  void write(int64_t real_ns, int64_t fake_ns, int64_t ppm);

  std::string path_;
  ClockControlBlock* block_ = nullptr;
  std::mutex mutex_;
};

// The shim library locksim built (liblocksim_clock_shim.so): beside the
// running executable, or where the build put it. Throws std::runtime_error
// when neither exists.
std::string clock_shim_library();

}  // namespace locksim::live
