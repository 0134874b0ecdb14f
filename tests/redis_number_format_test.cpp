// format_g17 (sim/redis/command_util.h) is Redis 7.0's "%.17g": a Lua number
// passed to redis.call, a sorted set's score in a reply. It has a fast path
// for whole numbers below 10^17 (times in ms, counters) and the general one;
// both must write exactly what snprintf writes, or a history changes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#include "sim/redis/command_util.h"
#include "sim/rng.h"

namespace locksim::sim::redis {
namespace {

std::string printf_g17(double d) {
  char buf[64];
  const int n = std::snprintf(buf, sizeof(buf), "%.17g", d);
  EXPECT_GT(n, 0);
  return std::string(buf, static_cast<size_t>(n));
}

double from_bits(uint64_t bits) {
  double d = 0;
  std::memcpy(&d, &bits, sizeof(d));
  return d;
}

TEST(FormatG17, EdgesOfTheWholeNumberPathMatchPrintf) {
  const double two53 = 9007199254740992.0;
  for (const double d : {0.0,
                         -0.0,
                         1.0,
                         -1.0,
                         7.0,
                         10.0,
                         123456789.0,
                         1732766400000.0,
                         -1732766400000.0,
                         two53,
                         two53 + 2,
                         -two53,
                         1e16,
                         1e17 - 16,
                         1e17,
                         -1e17,
                         1e17 + 16,
                         1e18,
                         9.2e18,
                         1e300,
                         0.5,
                         -0.5,
                         1e-5,
                         0.1,
                         123.456,
                         std::numeric_limits<double>::denorm_min(),
                         std::numeric_limits<double>::max(),
                         std::numeric_limits<double>::lowest()}) {
    EXPECT_EQ(format_g17(d), printf_g17(d)) << d;
  }
}

TEST(FormatG17, WholeNumbersAndAnyBitPatternMatchPrintf) {
  Rng rng(17);
  for (int i = 0; i < 200'000; ++i) {
    // Whole numbers of every size up to past 10^17, either sign.
    const int digits = static_cast<int>(rng.between(1, 19));
    double whole =
        std::floor(static_cast<double>(rng.below(uint64_t{1} << 62)) / std::pow(10.0, 19 - digits));
    if (rng.below(2) == 0) whole = -whole;
    ASSERT_EQ(format_g17(whole), printf_g17(whole)) << whole;
    // Any finite double, from its bits.
    const double any = from_bits(rng.below(std::numeric_limits<uint64_t>::max()));
    if (!std::isfinite(any)) continue;
    ASSERT_EQ(format_g17(any), printf_g17(any)) << any;
  }
}

}  // namespace
}  // namespace locksim::sim::redis
