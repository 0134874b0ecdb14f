#include "sim/mysql/lock_exposure.h"

#include <cstdio>

#include "env/assert.h"
#include "sim/mysql/schema.h"

namespace locksim::sim::mysql {

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (the civil calendar
// arithmetic every DATETIME conversion uses; eras of 400 years).
int64_t days_since_epoch(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t year_of_era = y - era * 400;
  const int64_t day_of_year = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

}  // namespace

TimePoint datetime_to_unix(const std::string& text) {
  long long y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  const int n =
      std::sscanf(text.c_str(), "%lld-%lld-%lld %lld:%lld:%lld", &y, &mo, &d, &h, &mi, &s);
  LOCKSIM_ASSERT_MSG(n == 6, "a stored DATETIME reads YYYY-MM-DD HH:MM:SS");
  const int64_t secs = days_since_epoch(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
  return TimePoint::from_ns(secs * 1'000'000'000);
}

bool row_free_for_fresh_contender(const Engine& engine, const std::string& lock_name,
                                  TimePoint correct_now) {
  const std::optional<Row> row = engine.committed_row(lock_name);
  if (!row) return true;  // v1 inserts it; v2/v3 insert it free and take it
  static const size_t status = *column_index("Fstatus");
  static const size_t deadline = *column_index("Fdeadline");
  LOCKSIM_ASSERT(row->size() == table_columns().size());
  if ((*row)[status] != "1") return true;
  return datetime_to_unix((*row)[deadline]) <= correct_now;
}

}  // namespace locksim::sim::mysql
