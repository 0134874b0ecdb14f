#include "env/datetime.h"

#include <cstdio>

#include "env/assert.h"

namespace locksim {

namespace {

constexpr int64_t kNsPerSecond = 1'000'000'000;
constexpr int64_t kSecondsPerDay = 86'400;

int64_t floor_div(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

// The decimal digits text[at, at + n) as a number. Asserted: all digits.
int64_t digits(std::string_view text, size_t at, size_t n) {
  int64_t v = 0;
  for (size_t i = at; i < at + n; ++i) {
    LOCKSIM_ASSERT_MSG(text[i] >= '0' && text[i] <= '9', "a DATETIME field is digits");
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

}  // namespace

int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void civil_from_days(int64_t days, int64_t& y, int64_t& m, int64_t& d) {
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp + (mp < 10 ? 3 : -9);
  y = yoe + era * 400 + (m <= 2 ? 1 : 0);
}

std::string format_datetime(TimePoint t) {
  const int64_t secs = floor_div(t.ns, kNsPerSecond);
  const int64_t micros = (t.ns - secs * kNsPerSecond) / 1000;
  const int64_t days = floor_div(secs, kSecondsPerDay);
  const int64_t sod = secs - days * kSecondsPerDay;
  int64_t y = 0, m = 0, d = 0;
  civil_from_days(days, y, m, d);
  char buf[128];  // room for any int64 fields: the compiler checks the bound
  std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lld %02lld:%02lld:%02lld.%06lld",
                static_cast<long long>(y), static_cast<long long>(m), static_cast<long long>(d),
                static_cast<long long>(sod / 3600), static_cast<long long>(sod / 60 % 60),
                static_cast<long long>(sod % 60), static_cast<long long>(micros));
  return buf;
}

TimePoint parse_datetime(std::string_view text) {
  LOCKSIM_ASSERT_MSG(text.size() >= 19 && text[4] == '-' && text[7] == '-' && text[10] == ' ' &&
                         text[13] == ':' && text[16] == ':',
                     "a DATETIME reads YYYY-MM-DD HH:MM:SS");
  const int64_t days = days_from_civil(digits(text, 0, 4), digits(text, 5, 2), digits(text, 8, 2));
  const int64_t secs = days * kSecondsPerDay + digits(text, 11, 2) * 3600 +
                       digits(text, 14, 2) * 60 + digits(text, 17, 2);
  return TimePoint::from_ns(secs * kNsPerSecond);
}

}  // namespace locksim
