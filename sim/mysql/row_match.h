// Whether a stored row satisfies a WHERE, as the simulated server compares:
// shared by the statement bodies (engine_statements.cpp) and the scans of
// ranges (engine_scan.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "env/sql_connection.h"
#include "sim/mysql/schema.h"
#include "sim/mysql/sql_statement.h"

namespace locksim::sim::mysql {

// The value of an operand: its literal, or the parameter bound to its `?`.
// Precondition (asserted): a `?` has a bound value.
const SqlValue& bound(const SqlOperand& op, const std::vector<SqlValue>& params);

// Does the stored `value` of column `col` satisfy `op operand`? Compared as
// MariaDB compares with that column: VARCHAR under its case-insensitive PAD
// SPACE collation (the order of unique_key_of, which is the unique index's
// order), integers as numbers, a DATETIME as DATETIME(6), keeping the
// operand's fraction ('... 00.5' never equals a stored '... 00'). NULL, or an
// operand the column's type cannot read (a non-integer for an INT, an invalid
// date), satisfies nothing — a simplification: MariaDB would convert it.
bool column_satisfies(size_t col, const std::string& value, SqlCompare op, const SqlValue& operand);

// Every condition holds for `row`.
bool row_matches(const Row& row, const std::vector<SqlCondition>& where,
                 const std::vector<SqlValue>& params);

// Where the stored `value` of column `col` lies against the range WHERE puts
// on that column: before it (a lower bound, > or >=, fails), past it (an
// upper bound, < or <=, fails) or within. Scans of an index in key order
// skip what lies before and stop at the first record past the range.
enum class RangePlace { kBefore, kWithin, kPast };
RangePlace range_place(size_t col, const std::string& value, const std::vector<SqlCondition>& where,
                       const std::vector<SqlValue>& params);

// Sets `out` to the SELECT list's values of `row`, by column index
// (SqlStatement::column_ids), into the room `out` has (a pooled row).
void project_into(const Row& row, const std::vector<size_t>& columns, SqlRow& out);

// An operand read as a Findex, or nullopt when it is not one.
std::optional<int64_t> findex_of(const SqlValue& v);

}  // namespace locksim::sim::mysql
