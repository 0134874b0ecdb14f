// Redis 7.0's number parsing and formatting (util.c, object.c, networking.c),
// shared by every command body (see command_util.h).
#include "sim/redis/command_util.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "env/assert.h"

namespace locksim::sim::redis {

std::string lowercase(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

Reply wrong_arity(const std::string& full_name) {
  return Reply::error("ERR wrong number of arguments for '" + full_name + "' command");
}

std::optional<int64_t> string2ll(const std::string& s) {
  constexpr size_t kLengthMax = 20;  // LONG_STR_SIZE - 1
  if (s.empty() || s.size() > kLengthMax) return std::nullopt;
  if (s.size() == 1 && s[0] == '0') return 0;
  size_t i = 0;
  const bool negative = s[0] == '-';
  if (negative) {
    ++i;
    if (i == s.size()) return std::nullopt;
  }
  if (s[i] < '1' || s[i] > '9') return std::nullopt;
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    const uint64_t digit = static_cast<uint64_t>(s[i] - '0');
    // v * 10 + digit past UINT64_MAX (without a division per digit).
    if (__builtin_mul_overflow(v, uint64_t{10}, &v) || __builtin_add_overflow(v, digit, &v)) {
      return std::nullopt;
    }
  }
  if (negative) {
    if (v > static_cast<uint64_t>(INT64_MAX) + 1) return std::nullopt;
    return static_cast<int64_t>(0 - v);  // two's complement; exact for INT64_MIN
  }
  if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<double> string2d(const std::string& s) {
  // isspace() in the C locale, as Redis checks only the first byte.
  if (s.empty() || s[0] == ' ' || (s[0] >= '\t' && s[0] <= '\r')) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  // strtod stops at an embedded NUL: the length check below then refuses it,
  // as Redis's (eptr - ptr) != sdslen does.
  const double value = std::strtod(s.c_str(), &end);
  const bool range_error =
      errno == ERANGE && (value == HUGE_VAL || value == -HUGE_VAL || value == 0);
  if (static_cast<size_t>(end - s.c_str()) != s.size() || range_error || std::isnan(value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<RankRange> clamp_rank_range(int64_t start, int64_t end, size_t length) {
  const auto len = static_cast<int64_t>(length);
  if (start < 0) start = len + start;  // no overflow: len is small and start negative
  if (end < 0) end = len + end;
  if (start < 0) start = 0;
  if (start > end || start >= len) return std::nullopt;
  if (end >= len) end = len - 1;
  LOCKSIM_ASSERT(0 <= start && start <= end && end < len);
  return RankRange{static_cast<size_t>(start), static_cast<size_t>(end)};
}

std::string format_double(double d) {
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  LOCKSIM_ASSERT_MSG(!std::isnan(d), "a NaN score in a reply");
  return format_g17(d);
}

std::string format_g17(double d) {
  // The common case first: a whole number below 10^17 (a score that is a
  // time in ms, a counter). "%.17g" prints it as its digits: its exponent is
  // at most 16, below the precision, so the notation is fixed, and a whole
  // number has no fraction to print. Its exact value fits an int64_t. Not
  // -0.0, which "%.17g" prints as "-0". (to_chars with a precision was 4 %
  // of a fair-lock run's instructions; redis_number_format_test holds the two
  // paths to snprintf.)
  if (d == std::trunc(d) && std::fabs(d) < 1e17 && !(d == 0 && std::signbit(d))) {
    char digits[24];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), static_cast<int64_t>(d));
    LOCKSIM_ASSERT_MSG(ec == std::errc(), "a whole number below 1e17 fits in 24 bytes");
    return std::string(digits, end);
  }
  // std::to_chars with a precision is specified to write what printf's
  // "%.17g" writes, without printf's format parsing and locale (a fair-lock
  // run spent 9 % of its time in vsnprintf).
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::general, 17);
  LOCKSIM_ASSERT_MSG(ec == std::errc(), "%.17g fits in 64 bytes");
  return std::string(buf, end);
}

}  // namespace locksim::sim::redis
