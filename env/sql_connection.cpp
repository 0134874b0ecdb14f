#include "env/sql_connection.h"

#include <utility>

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

SqlResult SqlResult::error(int error_number, std::string message) {
  LOCKSIM_ASSERT_MSG(error_number != 0, "an error result needs a MySQL error number");
  SqlResult r;
  r.error_number = error_number;
  r.sqlstate = sqlstate_for(error_number);
  r.message = std::move(message);
  return r;
}

}  // namespace locksim
