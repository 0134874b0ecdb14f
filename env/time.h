// Time as integer nanoseconds, with distinct types for instants and spans.
//
// Why integers: floating-point time accumulates rounding that differs with the
// order of operations, and byte-identical replays need every step exact.
// Why two types: adding two instants, or passing a span where an instant is
// meant, is a bug the compiler should catch.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>

namespace locksim {

// 128-bit intermediate for products of times and rates that may exceed 64
// bits. __extension__ because ISO C++ has no such type; GCC and Clang do.
__extension__ typedef __int128 Int128;

// a × b / c, rounded toward zero as C++ division rounds, exactly. The
// product is formed in 64 bits when it fits (a clock's ns × ppm does for at
// least 2.5 hours after the clock's last change, at any drift) and only
// otherwise in 128: a 128-bit division is a call into libgcc (__divti3),
// which every read of a drifting clock made, while a 64-bit one by a
// constant c compiles to a multiply. The same quotient either way.
// Precondition: c != 0 and the quotient fits in 64 bits.
inline int64_t mul_div(int64_t a, int64_t b, int64_t c) {
  int64_t product = 0;
  if (!__builtin_mul_overflow(a, b, &product)) return product / c;
  return static_cast<int64_t>(static_cast<Int128>(a) * b / c);
}

struct Duration {
  int64_t ns = 0;

  static constexpr Duration nanos(int64_t v) { return Duration{v}; }
  static constexpr Duration micros(int64_t v) { return Duration{v * 1000}; }
  static constexpr Duration millis(int64_t v) { return Duration{v * 1000 * 1000}; }
  static constexpr Duration seconds(int64_t v) { return Duration{v * 1000 * 1000 * 1000}; }
  static constexpr Duration zero() { return Duration{0}; }
  static constexpr Duration max() { return Duration{std::numeric_limits<int64_t>::max() / 4}; }

  // Truncates toward zero, as Redis does when it turns time into milliseconds.
  constexpr int64_t to_ms() const { return ns / 1000000; }
  constexpr double to_seconds() const { return static_cast<double>(ns) / 1e9; }

  constexpr Duration operator+(Duration o) const { return Duration{ns + o.ns}; }
  constexpr Duration operator-(Duration o) const { return Duration{ns - o.ns}; }
  constexpr Duration operator-() const { return Duration{-ns}; }
  constexpr Duration operator*(int64_t k) const { return Duration{ns * k}; }
  constexpr Duration operator/(int64_t k) const { return Duration{ns / k}; }
  constexpr Duration& operator+=(Duration o) {
    ns += o.ns;
    return *this;
  }
  constexpr Duration& operator-=(Duration o) {
    ns -= o.ns;
    return *this;
  }
  constexpr auto operator<=>(const Duration&) const = default;
};

struct TimePoint {
  int64_t ns = 0;  // nanoseconds since the epoch of whichever clock produced it

  static constexpr TimePoint from_ns(int64_t v) { return TimePoint{v}; }
  constexpr int64_t to_ms() const { return ns / 1000000; }

  constexpr TimePoint operator+(Duration d) const { return TimePoint{ns + d.ns}; }
  constexpr TimePoint operator-(Duration d) const { return TimePoint{ns - d.ns}; }
  constexpr Duration operator-(TimePoint o) const { return Duration{ns - o.ns}; }
  constexpr TimePoint& operator+=(Duration d) {
    ns += d.ns;
    return *this;
  }
  constexpr auto operator<=>(const TimePoint&) const = default;
};

}  // namespace locksim
