// The shared control block of the clock shim (live/clock_shim/clock_shim.cpp):
// a small file that locksim writes and every shimmed server maps, so a clock
// fault reaches the server at once without a signal or a restart.
//
// The server's wall clock reads
//   fake(real) = anchor_fake_ns + (real - anchor_real_ns) * (1e6 + rate_ppm) / 1e6
// where `real` is the real CLOCK_REALTIME: a jump moves anchor_fake_ns, a
// drift changes rate_ppm (re-anchored where the clock is then, so it does
// not jump). A seqlock keeps readers from seeing half a change: the writer
// makes `seq` odd, writes, makes it even; a reader retries while it is odd
// or changed under it. Plain C layout: the shim is built without the C++
// runtime's help and the file's bytes are the contract.
#pragma once

#include <stdint.h>

namespace locksim::live {

struct ClockControlBlock {
  uint64_t magic;  // kClockControlMagic once initialised
  uint64_t seq;    // odd while being written (read and written with atomics)
  int64_t anchor_real_ns;
  int64_t anchor_fake_ns;
  int64_t rate_ppm;
};

inline constexpr uint64_t kClockControlMagic = 0x6c6f636b73696d31ull;  // "locksim1"
// The environment variable naming the control file for the shimmed process.
inline constexpr const char* kClockFileEnv = "LOCKSIM_CLOCK_FILE";

// GCC's and clang's 128-bit integer (not ISO C++: __extension__ says so).
__extension__ using Int128 = __int128;

// fake(real), in 128-bit arithmetic (a day of nanoseconds times a million
// overflows 64 bits).
inline int64_t fake_clock_ns(const ClockControlBlock& b, int64_t real_ns) {
  const Int128 elapsed = static_cast<Int128>(real_ns - b.anchor_real_ns);
  return b.anchor_fake_ns + static_cast<int64_t>(elapsed * (1'000'000 + b.rate_ppm) / 1'000'000);
}

}  // namespace locksim::live
