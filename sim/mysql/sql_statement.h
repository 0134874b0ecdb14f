// The SQL the simulated server understands: exactly the subset the MySQL lock
// algorithms send, parsed into a small statement tree.
//
//   BEGIN | START TRANSACTION | COMMIT | ROLLBACK
//   SELECT * | col, ... FROM t_tag_lock WHERE cond [FOR UPDATE | LOCK IN SHARE MODE]
//   INSERT INTO t_tag_lock (col, ...) VALUES (value, ...)
//   UPDATE t_tag_lock SET col = expr, ... WHERE cond
//   DELETE FROM t_tag_lock WHERE cond
//
// cond is `test [AND test ...]`, test is `col op value` (op one of = < <= >
// >=) or `col BETWEEN value AND value` (read as >= and <=). value is `?`, a
// quoted string or an integer; expr is a value or `col + int` / `col - int`.
// Keywords are case-insensitive, identifiers may be back-quoted, a trailing
// `;` is allowed.
//
// InnoDB's locking depends on which index a statement searches, so the
// parser decides it (SqlAccess) as MariaDB 10.11's optimizer does for this
// table: an equality on a key is a one-row lookup (the primary key first),
// else a range on Findex scans the primary key, else a range on Flock_name
// scans the unique key, else the whole primary key is scanned. A WHERE that
// no key serves but that tests Fmodify_time is refused: that column has an
// index (idx_Fmodify_time) the simulation does not keep, which the optimizer
// might choose.
//
// Anything else is error 1064 naming the statement, as MariaDB reports a
// parse error (for valid SQL outside the subset, saying so) — never a crash.
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

enum class SqlCompare { kEq, kLt, kLe, kGt, kGe };

// `col op value`.
struct SqlCondition {
  size_t column = 0;  // index into table_columns(), resolved by the parser
  SqlCompare op = SqlCompare::kEq;
  SqlOperand value;
};

// How a statement finds its rows (see the top of this file).
enum class SqlAccess {
  kPkLookup,      // Findex = v
  kUniqueLookup,  // Flock_name = v
  kPkRange,       // a range on Findex: the primary key, scanned
  kUniqueRange,   // a range on Flock_name: uniq_Flock_name, scanned
  kFullScan,      // no key serves the WHERE: every row of the primary key
};

// One SET item: `col = value` or `col = col2 +/- delta`.
struct SqlAssignment {
  size_t column = 0;                  // index into table_columns()
  std::optional<size_t> base_column;  // set for col2 +/- delta
  int64_t delta = 0;
  SqlOperand value;  // when base_column is unset
};

enum class SqlLockMode { kNone, kShare, kUpdate };

struct SqlStatement {
  enum class Kind { kBegin, kCommit, kRollback, kSelect, kInsert, kUpdate, kDelete };
  Kind kind = Kind::kBegin;
  std::vector<std::string> columns;  // SELECT list (all for *) or INSERT list, canonical names
  std::vector<size_t> column_ids;    // the same columns as indices into table_columns()
  std::vector<SqlOperand> values;    // INSERT values, one per column
  std::vector<SqlAssignment> set;    // UPDATE
  std::vector<SqlCondition> where;   // all must hold
  SqlAccess access = SqlAccess::kFullScan;
  size_t key = 0;  // for a lookup: where[key] is the key's equality
  SqlLockMode lock = SqlLockMode::kNone;
  size_t param_count = 0;  // number of `?`
};

// Parses one statement. On failure returns an error SqlResult (1064) whose
// message names the statement as MariaDB's does ("... near '...' at line 1").
// Column names are checked against the t_tag_lock schema.
std::variant<SqlStatement, SqlResult> parse_sql(const std::string& sql);

}  // namespace locksim::sim::mysql
