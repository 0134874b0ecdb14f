// A statement's parameters for SqlConnection::query, each copied into it
// once, into a vector (and strings) a past statement left in the thread's
// pool when there is one (env/argv_pool.h; the simulated server gives a
// request's parameters back when it is done with them).
//
// Why not query(sql, {resource, token}): a braced list of SqlValue builds
// every parameter twice, first into the initializer_list (whose elements can
// only be copied) and then into the vector, so a token or a DATETIME costs
// two heap copies per statement. Here the list holds views. It still
// evaluates its elements left to right, and views of temporaries (a
// format_datetime(...) inside the braces) live to the end of the call's full
// expression. Every parameter is a value: none of the lock statements binds
// a NULL.
#pragma once

#include <initializer_list>
#include <string_view>
#include <vector>

#include "env/argv_pool.h"
#include "env/sql_connection.h"

namespace locksim::algorithms {

inline std::vector<SqlValue> sql_params(std::initializer_list<std::string_view> values) {
  return argv_pool::filled<SqlValue>(values);
}

}  // namespace locksim::algorithms
