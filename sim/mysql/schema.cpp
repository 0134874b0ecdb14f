#include "sim/mysql/schema.h"

#include <algorithm>
#include <string_view>

#include <cctype>
#include <cstdio>
#include <limits>

#include "env/assert.h"

namespace locksim::sim::mysql {

namespace {

// Strict integer text: optional sign, digits, nothing else (MariaDB in strict
// mode refuses '12abc' with 1366).
std::optional<int64_t> parse_integer(const std::string& s) {
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) negative = s[i++] == '-';
  if (i == s.size() || s.size() - i > 18) return std::nullopt;  // 18 digits fit int64
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return negative ? -v : v;
}

bool two_digits(std::string_view s, size_t at, int lo, int hi, int& out) {
  if (!std::isdigit(static_cast<unsigned char>(s[at])) ||
      !std::isdigit(static_cast<unsigned char>(s[at + 1]))) {
    return false;
  }
  out = (s[at] - '0') * 10 + (s[at + 1] - '0');
  return out >= lo && out <= hi;
}

// Days in `month` of `year`, Gregorian: MariaDB refuses '2024-02-30' and
// '2100-02-29' (1292) although each field is in range on its own.
int days_in_month(int year, int month) {
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// The fraction after the '.' at s[19]: its first six digits as microseconds;
// more digits are cut off (not rounded) and flagged. A '.' with no digits is
// a zero fraction (MariaDB takes it silently). False on a non-digit.
bool read_fraction(std::string_view s, DatetimeText& out) {
  if (s[19] != '.') return false;
  uint32_t scale = 100'000;
  for (size_t i = 20; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    out.micros += static_cast<uint32_t>(s[i] - '0') * scale;
    scale /= 10;  // 0 after the sixth digit: the rest add nothing
  }
  out.digits_cut = s.size() > 26;
  return true;
}

}  // namespace

std::optional<DatetimeText> read_datetime(std::string_view s) {
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
      s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  int year = 0;
  for (size_t i = 0; i < 4; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
    year = year * 10 + (s[i] - '0');
  }
  int month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!two_digits(s, 5, 1, 12, month) || !two_digits(s, 8, 1, 31, day) ||
      !two_digits(s, 11, 0, 23, hour) || !two_digits(s, 14, 0, 59, minute) ||
      !two_digits(s, 17, 0, 59, second) || day > days_in_month(year, month)) {
    return std::nullopt;
  }
  DatetimeText out;
  if (s.size() > 19 && !read_fraction(s, out)) return std::nullopt;
  out.seconds = std::string(s.substr(0, 19));
  out.seconds[10] = ' ';  // how the server writes it back, whichever was read
  // column_equals compares `seconds` with a stored value as text: same shape.
  LOCKSIM_ASSERT(out.seconds.size() == 19 && out.micros < 1'000'000);
  return out;
}

const std::vector<Column>& table_columns() {
  static const std::vector<Column> kColumns = {
      {"Findex", ColumnType::kInt, 0, "0"},
      {"Flock_name", ColumnType::kVarchar, 128, ""},
      {"Fcount", ColumnType::kInt, 0, "0"},
      {"Fdeadline", ColumnType::kDatetime, 0, "1970-01-01 00:00:00"},
      {"Fdesc", ColumnType::kVarchar, 255, ""},
      {"Fcreate_time", ColumnType::kDatetime, 0, "1970-01-01 00:00:00"},
      {"Fmodify_time", ColumnType::kDatetime, 0, "1970-01-01 00:00:00"},
      {"Fstatus", ColumnType::kTinyInt, 0, "1"},
  };
  return kColumns;
}

std::optional<size_t> column_index(const std::string& name) {
  // Called for every column a statement touches: compare in place, ASCII
  // case-insensitively (column names are ASCII), without building strings.
  const auto& cols = table_columns();
  for (size_t i = 0; i < cols.size(); ++i) {
    const std::string_view col = cols[i].name;
    if (col.size() == name.size() &&
        std::equal(col.begin(), col.end(), name.begin(),
                   [](char a, char b) { return ascii_lower(a) == ascii_lower(b); })) {
      return i;
    }
  }
  return std::nullopt;
}

Row default_row() {
  Row row;
  for (const Column& c : table_columns()) row.emplace_back(c.default_value);
  return row;
}

std::variant<std::string, SqlResult> store_value(size_t col, const SqlValue& value,
                                                 uint32_t* notes) {
  const auto& cols = table_columns();
  LOCKSIM_ASSERT(col < cols.size());
  const Column& c = cols[col];
  if (!value) {
    return SqlResult::error(1048, std::string("Column '") + c.name + "' cannot be null");
  }
  const std::string& v = *value;
  switch (c.type) {
    case ColumnType::kInt:
    case ColumnType::kTinyInt: {
      std::optional<int64_t> n = parse_integer(v);
      if (!n) {
        return SqlResult::error(
            1366, "Incorrect integer value: '" + v + "' for column `" + c.name + "` at row 1");
      }
      const int64_t hi = c.type == ColumnType::kInt ? std::numeric_limits<int32_t>::max() : 127;
      const int64_t lo = c.type == ColumnType::kInt ? std::numeric_limits<int32_t>::min() : -128;
      if (*n < lo || *n > hi) {
        return SqlResult::error(
            1264, std::string("Out of range value for column '") + c.name + "' at row 1");
      }
      return std::to_string(*n);
    }
    case ColumnType::kVarchar:
      if (v.size() > c.varchar_max) {
        return SqlResult::error(1406,
                                std::string("Data too long for column '") + c.name + "' at row 1");
      }
      return v;
    case ColumnType::kDatetime: {
      std::optional<DatetimeText> dt = read_datetime(v);
      if (!dt) {
        return SqlResult::error(
            sql_errno::kBadDatetime,
            "Incorrect datetime value: '" + v + "' for column `" + c.name + "` at row 1");
      }
      // DATETIME(0): the fraction goes silently (truncated, see the header);
      // only digits past the sixth, which no precision holds, raise a note.
      if (dt->digits_cut && notes != nullptr) ++*notes;
      return std::move(dt->seconds);
    }
  }
  LOCKSIM_ASSERT_MSG(false, "unknown column type");
  return std::string();
}

std::string unique_key_of(const std::string& lock_name) {
  size_t n = lock_name.size();
  while (n > 0 && lock_name[n - 1] == ' ') --n;
  std::string key(lock_name, 0, n);
  for (char& c : key) c = ascii_lower(c);
  return key;
}

bool same_unique_key(std::string_view a, std::string_view b) {
  if (a == b) return true;  // the usual case: the name as written
  while (!a.empty() && a.back() == ' ') a.remove_suffix(1);
  while (!b.empty() && b.back() == ' ') b.remove_suffix(1);
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return ascii_lower(x) == ascii_lower(y);
         });
}

}  // namespace locksim::sim::mysql
