// DATETIME text <-> unix time, as MariaDB writes and reads it: the one place
// both the MySQL lock algorithm (algorithms/mysql_lock.cpp, which formats its
// deadlines) and the simulated server's exposure probe (sim/mysql/
// lock_exposure.cpp, which reads them back) convert calendar dates.
//
// Dates are proleptic Gregorian, converted with the era-based civil-day
// arithmetic (400-year cycles of 146,097 days; H. Hinnant, "chrono-Compatible
// Low-Level Date Algorithms").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "env/time.h"

namespace locksim {

// Days since 1970-01-01 of year `y`, month `m` (1-12), day `d` (1-31), and back.
int64_t days_from_civil(int64_t y, int64_t m, int64_t d);
void civil_from_days(int64_t days, int64_t& y, int64_t& m, int64_t& d);

// "YYYY-MM-DD HH:MM:SS.ffffff": `t` (unix ns) with its microseconds, as a
// client library sends a DATETIME parameter.
std::string format_datetime(TimePoint t);

// "YYYY-MM-DD HH:MM:SS" (a trailing ".ffffff" ignored) as unix time in whole
// seconds. Precondition (asserted): the text has that shape, as a DATETIME
// the server stored or returned does. Does not allocate: the exposure probe
// calls it after every event of a hold.
TimePoint parse_datetime(std::string_view text);

}  // namespace locksim
