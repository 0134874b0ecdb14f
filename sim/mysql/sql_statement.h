// The SQL the simulated server understands: exactly the subset the MySQL lock
// algorithms send, parsed into a small statement tree.
//
//   BEGIN | START TRANSACTION | COMMIT | ROLLBACK
//   SELECT * | col, ... FROM t_tag_lock WHERE cond [FOR UPDATE | LOCK IN SHARE MODE]
//   INSERT INTO t_tag_lock (col, ...) VALUES (value, ...)
//   UPDATE t_tag_lock SET col = expr, ... WHERE cond
//   DELETE FROM t_tag_lock WHERE cond
//
// cond is `key = value [AND col = value ...]` whose first column is a key the
// server can search by (Findex, the primary key, or Flock_name, the unique
// key): the algorithms only ever look rows up by key, and InnoDB's locking
// depends on that index search, so the server refuses other shapes rather
// than guess. value is `?`, a quoted string or an integer; expr is a value or
// `col + int` / `col - int`. Keywords are case-insensitive, identifiers may be
// back-quoted, a trailing `;` is allowed.
//
// Anything else is error 1064 naming the statement, as MariaDB reports a
// parse error — never a crash.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "env/sql_connection.h"

namespace locksim::sim::mysql {

// A literal or the index of a `?` placeholder (0-based, in text order).
struct SqlOperand {
  std::optional<size_t> param;  // set for `?`
  SqlValue literal;             // otherwise
};

// `col = value`.
struct SqlCondition {
  std::string column;  // canonical spelling from the schema
  SqlOperand value;
};

// One SET item: `col = value` or `col = col2 +/- delta`.
struct SqlAssignment {
  std::string column;
  std::optional<std::string> base_column;  // set for col2 +/- delta
  int64_t delta = 0;
  SqlOperand value;  // when base_column is unset
};

enum class SqlLockMode { kNone, kShare, kUpdate };

struct SqlStatement {
  enum class Kind { kBegin, kCommit, kRollback, kSelect, kInsert, kUpdate, kDelete };
  Kind kind = Kind::kBegin;
  std::vector<std::string> columns;  // SELECT list (all for *) or INSERT list
  std::vector<SqlOperand> values;    // INSERT values, one per column
  std::vector<SqlAssignment> set;    // UPDATE
  std::vector<SqlCondition> where;   // where[0] is the key lookup
  SqlLockMode lock = SqlLockMode::kNone;
  size_t param_count = 0;  // number of `?`
};

// Parses one statement. On failure returns an error SqlResult (1064) whose
// message names the statement as MariaDB's does ("... near '...' at line 1").
// Column names are checked against the t_tag_lock schema.
std::variant<SqlStatement, SqlResult> parse_sql(const std::string& sql);

}  // namespace locksim::sim::mysql
