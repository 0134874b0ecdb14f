#include "sim/mysql/row_match.h"

#include <algorithm>
#include <variant>

#include "env/argv_pool.h"
#include "env/assert.h"

namespace locksim::sim::mysql {

namespace {

// -1, 0 or 1 as a <, ==, > b.
template <typename T>
int three_way(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

bool holds(int order, SqlCompare op) {
  switch (op) {
    case SqlCompare::kEq:
      return order == 0;
    case SqlCompare::kLt:
      return order < 0;
    case SqlCompare::kLe:
      return order <= 0;
    case SqlCompare::kGt:
      return order > 0;
    case SqlCompare::kGe:
      return order >= 0;
  }
  return false;
}

// The order of the stored value against the operand, or nullopt when the
// operand cannot be compared (see column_satisfies).
std::optional<int> order_against(size_t col, const std::string& value, const SqlValue& operand) {
  if (!operand) return std::nullopt;
  const Column& c = table_columns()[col];
  switch (c.type) {
    case ColumnType::kDatetime: {
      const std::optional<DatetimeText> dt = read_datetime(*operand);
      if (!dt) return std::nullopt;
      // DATETIME(0) holds no fraction; its text is fixed-width, so text order
      // is time order.
      const int whole = three_way(value, dt->seconds);
      return whole != 0 ? whole : three_way<uint32_t>(0, dt->micros);
    }
    case ColumnType::kVarchar:
      return three_way(unique_key_of(value), unique_key_of(*operand));
    case ColumnType::kInt:
    case ColumnType::kTinyInt: {
      auto stored = store_value(col, operand);
      if (std::holds_alternative<SqlResult>(stored)) return std::nullopt;
      return three_way(std::stoll(value), std::stoll(std::get<std::string>(stored)));
    }
  }
  return std::nullopt;
}

}  // namespace

const SqlValue& bound(const SqlOperand& op, const std::vector<SqlValue>& params) {
  if (op.param) {
    LOCKSIM_ASSERT(*op.param < params.size());
    return params[*op.param];
  }
  return op.literal;
}

bool column_satisfies(size_t col, const std::string& value, SqlCompare op,
                      const SqlValue& operand) {
  const Column& c = table_columns()[col];
  // The algorithms' one comparison, run for every row a statement reads: no
  // key built, no allocation.
  if (op == SqlCompare::kEq && c.type == ColumnType::kVarchar && operand &&
      operand->size() <= c.varchar_max) {
    return same_unique_key(value, *operand);
  }
  const std::optional<int> order = order_against(col, value, operand);
  return order && holds(*order, op);
}

bool row_matches(const Row& row, const std::vector<SqlCondition>& where,
                 const std::vector<SqlValue>& params) {
  return std::all_of(where.begin(), where.end(), [&](const SqlCondition& c) {
    return column_satisfies(c.column, row[c.column], c.op, bound(c.value, params));
  });
}

RangePlace range_place(size_t col, const std::string& value, const std::vector<SqlCondition>& where,
                       const std::vector<SqlValue>& params) {
  bool past = false;
  for (const SqlCondition& c : where) {
    if (c.column != col || c.op == SqlCompare::kEq) continue;
    if (column_satisfies(col, value, c.op, bound(c.value, params))) continue;
    if (c.op == SqlCompare::kGt || c.op == SqlCompare::kGe) return RangePlace::kBefore;
    past = true;
  }
  return past ? RangePlace::kPast : RangePlace::kWithin;
}

void project_into(const Row& row, const std::vector<size_t>& columns, SqlRow& out) {
  out.resize(columns.size());
  for (size_t i = 0; i < columns.size(); ++i) argv_pool::overwrite(out[i], row[columns[i]]);
}

std::optional<int64_t> findex_of(const SqlValue& v) {
  auto stored = store_value(kFindex, v);
  if (std::holds_alternative<SqlResult>(stored)) return std::nullopt;
  return std::stoll(std::get<std::string>(stored));
}

}  // namespace locksim::sim::mysql
