#include "live/mariadb_connection.h"

#include <errmsg.h>
#include <mysql.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>

#include "env/assert.h"

namespace locksim::live {

namespace {

// The lock code prepares a handful of texts; a test may prepare a few dozen.
// Past this many the cache is emptied rather than grown without bound.
constexpr size_t kStatementsMax = 64;
// ER_CONNECTION_KILLED: the server ended the session (KILL, shutdown).
constexpr unsigned int kConnectionKilled = 1927;

// Errors after which the session is gone: every client-side error (2000-2999:
// refused, timed out, dropped) and the server killing the connection.
bool session_lost(unsigned int number) {
  return (number >= 2000 && number < 3000) || number == kConnectionKilled;
}

// One column value as the seam's text (NULL: nullopt).
SqlValue text_value(const char* data, unsigned long length) {
  if (data == nullptr) return std::nullopt;
  return std::string(data, length);
}

}  // namespace

MariadbConnection::MariadbConnection(Address address, Duration timeout, std::string name)
    : address_(std::move(address)),
      timeout_s_(static_cast<unsigned int>(std::max<int64_t>(
          1, (timeout.ns + Duration::seconds(1).ns - 1) / Duration::seconds(1).ns))),
      name_(std::move(name)) {
  LOCKSIM_ASSERT_MSG(timeout.ns > 0, "a MariaDB connection needs a positive timeout");
}

MariadbConnection::~MariadbConnection() {
  close();
}

void MariadbConnection::close() {
  for (auto& [sql, stmt] : statements_) mysql_stmt_close(stmt);
  statements_.clear();
  if (mysql_ != nullptr) mysql_close(mysql_);
  mysql_ = nullptr;
  LOCKSIM_ASSERT(statements_.empty() && mysql_ == nullptr);
}

unsigned long MariadbConnection::thread_id() const {
  return mysql_ == nullptr ? 0 : mysql_thread_id(mysql_);
}

std::string MariadbConnection::ensure_connected() {
  if (mysql_ != nullptr) return "";
  // mysql_init initialises the library on first use, which is not
  // thread-safe; the clients of a live run connect from their own threads.
  static std::once_flag library_once;
  std::call_once(library_once, [] { mysql_library_init(0, nullptr, nullptr); });
  MYSQL* m = mysql_init(nullptr);
  if (m == nullptr) return "mysql_init failed (out of memory)";
  mysql_optionsv(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout_s_);
  mysql_optionsv(m, MYSQL_OPT_READ_TIMEOUT, &timeout_s_);
  mysql_optionsv(m, MYSQL_OPT_WRITE_TIMEOUT, &timeout_s_);
  // Never resend a statement behind the caller's back: an unknown outcome is
  // the lock algorithm's to handle (2013), as in the simulation.
  my_bool reconnect = 0;
  mysql_optionsv(m, MYSQL_OPT_RECONNECT, &reconnect);
  if (mysql_real_connect(m, address_.host.c_str(), address_.user.c_str(), "",
                         address_.database.empty() ? nullptr : address_.database.c_str(),
                         static_cast<unsigned int>(address_.port), nullptr, 0) == nullptr) {
    std::string why = "connect to " + address_.host + ":" + std::to_string(address_.port) +
                      " failed: error " + std::to_string(mysql_errno(m)) + ": " + mysql_error(m);
    mysql_close(m);
    return why;
  }
  mysql_ = m;
  return "";
}

SqlResult MariadbConnection::fail(unsigned int number, const char* sqlstate, const char* message) {
  LOCKSIM_ASSERT_MSG(number != 0, "fail() without an error");
  if (session_lost(number)) {
    // The server rolls the session's transaction back when the link drops;
    // dropping our side too makes the next query start a fresh session.
    std::string why = "lost connection to " + name_ + " (client error " + std::to_string(number) +
                      ": " + message + ")";
    close();
    return SqlResult::error(sql_errno::kServerLost, std::move(why));
  }
  SqlResult r;
  r.error_number = static_cast<int>(number);
  r.sqlstate = sqlstate;
  r.message = message;
  return r;
}

SqlResult MariadbConnection::query(const std::string& sql, std::vector<SqlValue> params) {
  if (const std::string why = ensure_connected(); !why.empty()) {
    return SqlResult::error(sql_errno::kServerLost, why);
  }
  SqlResult r = params.empty() && sql.find('?') == std::string::npos ? run_text(sql)
                                                                     : run_prepared(sql, params);
  // A success carries no error; a lost session is gone on our side too.
  LOCKSIM_ASSERT(r.ok() == (r.error_number == 0));
  LOCKSIM_ASSERT(r.error_number != sql_errno::kServerLost || mysql_ == nullptr);
  return r;
}

SqlResult MariadbConnection::run_text(const std::string& sql) {
  if (mysql_real_query(mysql_, sql.data(), sql.size()) != 0) {
    return fail(mysql_errno(mysql_), mysql_sqlstate(mysql_), mysql_error(mysql_));
  }
  SqlResult r;
  if (mysql_field_count(mysql_) == 0) {
    r.affected_rows = mysql_affected_rows(mysql_);
    r.last_insert_id = mysql_insert_id(mysql_);
    r.warnings = mysql_warning_count(mysql_);
    return r;
  }
  MYSQL_RES* res = mysql_store_result(mysql_);
  if (res == nullptr) return fail(mysql_errno(mysql_), mysql_sqlstate(mysql_), mysql_error(mysql_));
  const unsigned int n = mysql_num_fields(res);
  const MYSQL_FIELD* fields = mysql_fetch_fields(res);
  for (unsigned int i = 0; i < n; ++i) r.columns.emplace_back(fields[i].name);
  while (MYSQL_ROW row = mysql_fetch_row(res)) {
    const unsigned long* lengths = mysql_fetch_lengths(res);
    SqlRow out;
    for (unsigned int i = 0; i < n; ++i) out.push_back(text_value(row[i], lengths[i]));
    r.rows.push_back(std::move(out));
  }
  mysql_free_result(res);
  // Read after the last row: the count travels in the packet that ends the set.
  r.warnings = mysql_warning_count(mysql_);
  return r;
}

MYSQL_STMT* MariadbConnection::prepared(const std::string& sql, SqlResult* error) {
  if (auto it = statements_.find(sql); it != statements_.end()) return it->second;
  if (statements_.size() >= kStatementsMax) {
    for (auto& [text, stmt] : statements_) mysql_stmt_close(stmt);
    statements_.clear();
  }
  MYSQL_STMT* stmt = mysql_stmt_init(mysql_);
  if (stmt == nullptr) {
    *error = fail(mysql_errno(mysql_), mysql_sqlstate(mysql_), mysql_error(mysql_));
    return nullptr;
  }
  if (mysql_stmt_prepare(stmt, sql.data(), sql.size()) != 0) {
    const unsigned int number = mysql_stmt_errno(stmt);
    const std::string state = mysql_stmt_sqlstate(stmt);
    const std::string message = mysql_stmt_error(stmt);
    mysql_stmt_close(stmt);
    *error = fail(number, state.c_str(), message.c_str());
    return nullptr;
  }
  statements_.emplace(sql, stmt);
  return stmt;
}

namespace {

// Binds every parameter as a string (the server converts it as it converts
// a quoted literal). The arrays must outlive the execute.
bool bind_params(MYSQL_STMT* stmt, const std::vector<SqlValue>& params,
                 std::vector<MYSQL_BIND>& binds, std::vector<unsigned long>& lengths,
                 std::vector<my_bool>& nulls) {
  binds.assign(params.size(), MYSQL_BIND{});
  lengths.assign(params.size(), 0);
  nulls.assign(params.size(), 0);
  for (size_t i = 0; i < params.size(); ++i) {
    binds[i].buffer_type = MYSQL_TYPE_STRING;
    nulls[i] = params[i].has_value() ? 0 : 1;
    binds[i].is_null = &nulls[i];
    if (params[i].has_value()) {
      binds[i].buffer = const_cast<char*>(params[i]->data());
      lengths[i] = params[i]->size();
      binds[i].buffer_length = params[i]->size();
      binds[i].length = &lengths[i];
    }
  }
  return mysql_stmt_bind_param(stmt, binds.empty() ? nullptr : binds.data()) == 0;
}

// Reads the stored result set of `stmt` as text rows into r. False on a
// fetch error (the statement's error is then set).
bool fetch_rows(MYSQL_STMT* stmt, MYSQL_RES* meta, SqlResult& r) {
  const unsigned int n = mysql_num_fields(meta);
  const MYSQL_FIELD* fields = mysql_fetch_fields(meta);
  std::vector<MYSQL_BIND> binds(n, MYSQL_BIND{});
  std::vector<std::vector<char>> buffers(n);
  std::vector<unsigned long> lengths(n, 0);
  std::vector<my_bool> nulls(n, 0);
  for (unsigned int i = 0; i < n; ++i) {
    r.columns.emplace_back(fields[i].name);
    // The display width (or the longest value seen) fits any value as text.
    buffers[i].resize(std::max<unsigned long>({fields[i].length, fields[i].max_length, 64}) + 1);
    binds[i].buffer_type = MYSQL_TYPE_STRING;
    binds[i].buffer = buffers[i].data();
    binds[i].buffer_length = buffers[i].size();
    binds[i].length = &lengths[i];
    binds[i].is_null = &nulls[i];
  }
  if (n > 0 && mysql_stmt_bind_result(stmt, binds.data()) != 0) return false;
  for (;;) {
    const int rc = mysql_stmt_fetch(stmt);
    if (rc == MYSQL_NO_DATA) return true;
    if (rc == 1) return false;
    LOCKSIM_ASSERT_MSG(rc == 0, "a result value did not fit its buffer");
    SqlRow row;
    for (unsigned int i = 0; i < n; ++i) {
      row.push_back(nulls[i] ? SqlValue() : SqlValue(std::string(buffers[i].data(), lengths[i])));
    }
    r.rows.push_back(std::move(row));
  }
}

}  // namespace

SqlResult MariadbConnection::run_prepared(const std::string& sql,
                                          const std::vector<SqlValue>& params) {
  SqlResult r;
  MYSQL_STMT* stmt = prepared(sql, &r);
  if (stmt == nullptr) return r;
  if (mysql_stmt_param_count(stmt) != params.size()) {
    return SqlResult::error(sql_errno::kParseError,
                            "statement has " + std::to_string(mysql_stmt_param_count(stmt)) +
                                " placeholders, " + std::to_string(params.size()) +
                                " values given: " + sql);
  }
  std::vector<MYSQL_BIND> binds;
  std::vector<unsigned long> lengths;
  std::vector<my_bool> nulls;
  auto stmt_fail = [&] {
    return fail(mysql_stmt_errno(stmt), mysql_stmt_sqlstate(stmt), mysql_stmt_error(stmt));
  };
  if (!bind_params(stmt, params, binds, lengths, nulls) || mysql_stmt_execute(stmt) != 0) {
    return stmt_fail();
  }
  MYSQL_RES* meta = mysql_stmt_result_metadata(stmt);
  if (meta == nullptr) {
    r.affected_rows = mysql_stmt_affected_rows(stmt);
    r.last_insert_id = mysql_stmt_insert_id(stmt);
    // libmariadb has no per-statement count: the connection's is the last
    // statement's, and that is this one.
    r.warnings = mysql_warning_count(mysql_);
    return r;
  }
  my_bool update_max = 1;
  mysql_stmt_attr_set(stmt, STMT_ATTR_UPDATE_MAX_LENGTH, &update_max);
  const bool ok = mysql_stmt_store_result(stmt) == 0 && fetch_rows(stmt, meta, r);
  mysql_free_result(meta);
  if (!ok) return stmt_fail();
  mysql_stmt_free_result(stmt);
  r.warnings = mysql_warning_count(mysql_);  // after the last row, as in run_text
  return r;
}

}  // namespace locksim::live
