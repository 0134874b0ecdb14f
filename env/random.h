// Mappings from raw 64-bit random words to the few distributions locksim needs.
//
// Why our own: the standard library distributions (uniform_int and friends) are implemented
// differently by libstdc++ and libc++, so a seed would not replay across
// toolchains. These are exact, integer-only where possible, and documented.
#pragma once

#include <cmath>
#include <cstdint>

#include "env/assert.h"

namespace locksim {

// Uniform integer in [0, n), n > 0, by rejection on the top of the word range
// (no modulo bias). `next` returns 64 uniformly random bits.
template <class Next>
uint64_t uniform_below(Next&& next, uint64_t n) {
  LOCKSIM_ASSERT_MSG(n > 0, "a uniform draw from an empty range");
  // Largest multiple of n that fits: words at or above it are rejected.
  const uint64_t limit = UINT64_MAX - (UINT64_MAX % n);
  for (int attempt = 0; attempt < 64; ++attempt) {  // P(64 rejections) < 2^-64
    const uint64_t x = next();
    if (x < limit) return x % n;
  }
  return next() % n;  // unreachable in practice; bounded like every loop here
}

// Uniform integer in [lo, hi], lo <= hi.
template <class Next>
int64_t uniform_between(Next&& next, int64_t lo, int64_t hi) {
  LOCKSIM_ASSERT_MSG(lo <= hi, "a uniform draw from an empty range");
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (span == UINT64_MAX) return static_cast<int64_t>(next());
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + uniform_below(next, span + 1));
}

// Uniform double in [0, 1) from the top 53 bits.
inline double unit_double(uint64_t word) {
  return static_cast<double>(word >> 11) * 0x1.0p-53;
}

// Exponential with the given mean, by inversion. std::log is correctly rounded
// enough on glibc and libm alike for our purposes; the result is rounded to
// whole nanoseconds by the caller, and clamped to 50 means so one unlucky draw
// cannot stall a run.
inline double exponential_from(uint64_t word, double mean) {
  LOCKSIM_ASSERT_MSG(mean >= 0.0, "an exponential with a negative mean");
  const double u = unit_double(word);
  double x = -std::log1p(-u) * mean;
  if (x > 50 * mean) x = 50 * mean;
  return x;
}

}  // namespace locksim
