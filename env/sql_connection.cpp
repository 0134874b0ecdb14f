#include "env/sql_connection.h"

#include <utility>

#include "env/argv_pool.h"
#include "env/assert.h"

namespace locksim {

const char* sqlstate_for(int error_number) {
  switch (error_number) {
    case sql_errno::kDupEntry:
      return "23000";
    case sql_errno::kParseError:
      return "42000";
    case sql_errno::kDeadlock:
      return "40001";
    case sql_errno::kBadDatetime:
      return "22007";  // data exception: invalid datetime format
    default:
      return "HY000";
  }
}

SqlResult& SqlResult::operator=(SqlResult&& other) noexcept {
  if (this == &other) return *this;
  if (!columns.empty() || !rows.empty()) give_back_vectors();
  // Every field: one added to SqlResult is moved here too.
  error_number = other.error_number;
  sqlstate = std::move(other.sqlstate);
  message = std::move(other.message);
  columns = std::move(other.columns);
  rows = std::move(other.rows);
  affected_rows = other.affected_rows;
  last_insert_id = other.last_insert_id;
  warnings = other.warnings;
  return *this;
}

void SqlResult::give_back_vectors() noexcept {
  argv_pool::give_back(std::move(columns));
  argv_pool::give_back(std::move(rows));
}

SqlResult SqlResult::error(int error_number, std::string message) {
  LOCKSIM_ASSERT_MSG(error_number != 0, "an error result needs a MySQL error number");
  SqlResult r;
  r.error_number = error_number;
  r.sqlstate = sqlstate_for(error_number);
  r.message = std::move(message);
  return r;
}

}  // namespace locksim
