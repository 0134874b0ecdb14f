// The one table the simulated server holds: the article's t_tag_lock, with
// its column types, defaults, and how MariaDB 10.11 stores a value put into
// each column under kSqlMode (strict mode: a value the column cannot take is
// an error, not a warning and a zero).
//
// CREATE TABLE t_tag_lock (
//   Findex INT NOT NULL AUTO_INCREMENT,
//   Flock_name VARCHAR(128) NOT NULL DEFAULT '',
//   Fcount INT NOT NULL DEFAULT 0,
//   Fdeadline DATETIME NOT NULL DEFAULT '1970-01-01 00:00:00',
//   Fdesc VARCHAR(255) NOT NULL DEFAULT '',
//   Fcreate_time DATETIME NOT NULL DEFAULT '1970-01-01 00:00:00',
//   Fmodify_time DATETIME NOT NULL DEFAULT '1970-01-01 00:00:00',
//   Fstatus TINYINT NOT NULL DEFAULT 1,
//   PRIMARY KEY (Findex), UNIQUE KEY uniq_Flock_name (Flock_name),
//   KEY idx_Fmodify_time (Fmodify_time)
// ) ENGINE=InnoDB;
//
// DATETIME (precision 0) holds whole seconds. MariaDB *truncates* a fraction
// on conversion to a lower precision unless sql_mode has TIME_ROUND_FRACTIONAL
// (added in 10.4 precisely because truncation is the default; MySQL 5.6.4+
// rounds instead, and has TIME_TRUNCATE_FRACTIONAL for the opposite). So
// '2026-11-23 14:00:05.999' is stored as '2026-11-23 14:00:05': a deadline
// written as now + expire can lose up to a second.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "env/sql_connection.h"

namespace locksim::sim::mysql {

inline constexpr const char* kTableName = "t_tag_lock";

// The sql_mode whose rules store_value follows: MariaDB 10.11's compiled-in
// default, which Debian's packages keep and the differential test's mariadbd
// (--no-defaults) runs with; that test checks it. Without
// STRICT_TRANS_TABLES an invalid DATETIME would be stored as zeros with a
// warning instead of refused.
inline constexpr const char* kSqlMode =
    "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION";

enum class ColumnType { kInt, kTinyInt, kVarchar, kDatetime };

struct Column {
  const char* name;
  ColumnType type;
  size_t varchar_max = 0;  // characters, for kVarchar
  const char* default_value;
};

// The columns in table order; index i is the row's field i.
const std::vector<Column>& table_columns();
// The index of `name` (case-insensitive, as MySQL column names are), or nullopt.
std::optional<size_t> column_index(const std::string& name);
inline constexpr size_t kFindex = 0;
inline constexpr size_t kFlockName = 1;

// A row: one text value per column (NOT NULL everywhere, so never NULL).
using Row = std::vector<std::string>;

// The row an INSERT starts from: every column at its default.
Row default_row();

// A string read as a DATETIME, as MariaDB reads one:
// 'YYYY-MM-DD HH:MM:SS[.f...]', ' ' or 'T' between date and time, a date the
// calendar has (no February 30). Other spellings MariaDB also takes
// ('2024/03/01', one-digit fields, a bare date) are refused here: every
// client of the simulation formats dates one way (env/datetime.h).
struct DatetimeText {
  std::string seconds;      // 'YYYY-MM-DD HH:MM:SS', always ' ': what DATETIME(0) holds
  uint32_t micros = 0;      // the fraction's first six digits
  bool digits_cut = false;  // there were more than six, cut off (a note when stored)
};
std::optional<DatetimeText> read_datetime(std::string_view text);

// Converts `value` as the server stores it into column `col`: integers to
// their canonical text (range-checked), DATETIME truncated to whole seconds,
// VARCHAR length-checked. On a value the column cannot take (strict mode)
// returns the error: 1048 for NULL, 1366 for a bad integer, 1264 out of range,
// 1292 a bad datetime, 1406 too long. When `notes` is given, adds the notes
// MariaDB raises for a value it stores altered: a DATETIME fraction past six
// digits (1265), the one note modelled.
std::variant<std::string, SqlResult> store_value(size_t col, const SqlValue& value,
                                                 uint32_t* notes = nullptr);

// The key under which the unique index compares Flock_name: MariaDB's default
// collations are case-insensitive and PAD SPACE, so 'Lock ' and 'lock' are
// the same key (ASCII folding; the algorithms' names are ASCII).
std::string unique_key_of(const std::string& lock_name);

// unique_key_of(a) == unique_key_of(b), without building either key. Runs
// for every row a statement compares, so it does not allocate.
bool same_unique_key(std::string_view a, std::string_view b);

// ASCII case folding ('A'..'Z' only): what every name comparison here needs,
// without std::tolower's locale lookup per character.
constexpr char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c;
}

}  // namespace locksim::sim::mysql
