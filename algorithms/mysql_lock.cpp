#include "algorithms/mysql_lock.h"

#include <zlib.h>

#include <cstdio>

#include "algorithms/param_reader.h"
#include "algorithms/set_nx_lua.h"
#include "algorithms/sql_params.h"
#include "env/assert.h"
#include "env/datetime.h"
#include "env/parse.h"

namespace locksim::algorithms {

namespace {

constexpr int64_t kNsPerSecond = 1'000'000'000;

int64_t floor_div(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

// The instant MariaDB stores for `t` in a DATETIME(0): the fraction truncated.
TimePoint truncate_to_second(TimePoint t) {
  return TimePoint::from_ns(floor_div(t.ns, kNsPerSecond) * kNsPerSecond);
}

std::string describe(const SqlResult& r) {
  return "error " + std::to_string(r.error_number) + " (" + r.sqlstate + "): " + r.message;
}

// The statements, as strings built once: SqlConnection::query takes a
// std::string, and a literal would be copied into a new one at every call.
const std::string kBegin = "BEGIN";
const std::string kCommit = "COMMIT";
const std::string kRollback = "ROLLBACK";
const std::string kSelectForUpdate =
    "SELECT Fcount, Fstatus, Fdeadline, Fdesc FROM t_tag_lock WHERE Flock_name = ? FOR UPDATE";
const std::string kSelectSnapshot =
    "SELECT Fcount, Fstatus, Fdeadline, Fdesc FROM t_tag_lock WHERE Flock_name = ?";
const std::string kSelectCount = "SELECT Fcount FROM t_tag_lock WHERE Flock_name = ?";
const std::string kInsertCenter =
    "INSERT INTO t_tag_lock (Flock_name, Fstatus, Fdesc) VALUES (?, 0, 'center')";
// acquire=steal: takes the row only if its deadline has passed.
const std::string kUpdateSteal =
    "UPDATE t_tag_lock SET Fdeadline = ?, Fstatus = 1, Fdesc = ?, Fcount = Fcount + 1, "
    "Fmodify_time = ? WHERE Flock_name = ? AND Fdeadline < ?";
const std::string kInsertHeld =
    "INSERT INTO t_tag_lock (Flock_name, Fcount, Fstatus, Fdeadline, Fdesc, Fcreate_time, "
    "Fmodify_time) VALUES (?, 1, 1, ?, ?, ?, ?)";
const std::string kUpdateTake =
    "UPDATE t_tag_lock SET Fdeadline = ?, Fstatus = 1, Fdesc = ?, Fcount = Fcount + 1, "
    "Fmodify_time = ? WHERE Flock_name = ?";
// The releases (see the header).
const std::string kReleaseCheckedSteal =
    "UPDATE t_tag_lock SET Fstatus = 0, Fdeadline = ?, Fmodify_time = ? WHERE "
    "Flock_name = ? AND Fdesc = ? AND Fstatus = 1";
const std::string kReleaseChecked =
    "UPDATE t_tag_lock SET Fstatus = 0, Fmodify_time = ? WHERE Flock_name = ? "
    "AND Fdesc = ? AND Fstatus = 1";
const std::string kReleaseBlindSteal =
    "UPDATE t_tag_lock SET Fstatus = 0, Fdeadline = ?, Fmodify_time = ? WHERE "
    "Flock_name = ?";
const std::string kReleaseBlind =
    "UPDATE t_tag_lock SET Fstatus = 0, Fmodify_time = ? WHERE Flock_name = ?";
const std::string kReleaseDelete = "DELETE FROM t_tag_lock WHERE Flock_name = ? AND Fdesc = ?";

}  // namespace

MysqlLock::MysqlLock(Params params) : params_(params) {
  LOCKSIM_ASSERT_MSG(params_.ttl >= Duration::seconds(1), "the spec refuses a TTL below 1 s");
  LOCKSIM_ASSERT(params_.retry.valid());
}

std::string MysqlLock::name() const {
  switch (params_.version) {
    case Version::kV1:
      return "mysql-v1";
    case Version::kCenter:
      return "mysql-center";
    case Version::kSegmented:
      return "mysql-segmented";
  }
  return "mysql";
}

std::string MysqlLock::center_row(const std::string& resource) const {
  if (params_.version != Version::kSegmented) return "center_lock";
  const uLong crc = crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(resource.data()),
                          static_cast<uInt>(resource.size()));
  char buf[24];
  std::snprintf(buf, sizeof buf, "center_lock_%02lu", static_cast<unsigned long>(crc % 100));
  return buf;
}

AcquireResult MysqlLock::acquire(Env& env, const std::string& resource) {
  SqlConnection& sql = env.sql();
  AcquireResult result;
  const std::string token = make_token(env);
  const TimePoint start = env.now();
  bool unknown = false;  // a COMMIT of ours was lost: the row may be ours already
  for (int attempt = 1; attempt <= params_.retry.max_attempts; ++attempt) {
    result.attempts = attempt;
    const Attempt a =
        params_.take == Take::kSteal      ? attempt_steal(sql, env, resource, token, unknown)
        : params_.version == Version::kV1 ? attempt_v1(sql, env, resource, token, unknown)
                                          : attempt_center(sql, env, resource, token, unknown);
    if (a.outcome == Outcome::kOk) {
      result.outcome = Outcome::kOk;
      result.lease.resource = resource;
      result.lease.token = token;
      result.lease.fence = a.fence;
      result.lease.acquired_local = start;
      // Until the stored deadline, by our clock: others judge it by theirs.
      result.lease.validity = a.deadline - env.now();
      result.detail.clear();
      LOCKSIM_ASSERT(is_well_formed(result.lease));
      return result;
    }
    unknown |= a.outcome == Outcome::kUnknown;
    result.detail = a.detail;
    params_.retry.backoff_after(env, attempt);
  }
  result.outcome = unknown ? Outcome::kUnknown : Outcome::kFail;
  return result;
}

namespace {

// An attempt that ends on an error before COMMIT: the transaction is rolled
// back (by the server for 1213 and a lost connection, by us otherwise), so
// nothing of it happened. Returns the detail for the history.
std::string abort_attempt(SqlConnection& sql, const SqlResult& r) {
  if (r.error_number != sql_errno::kDeadlock && r.error_number != sql_errno::kServerLost) {
    (void)sql.query(kRollback, {});
  }
  return describe(r);
}

}  // namespace

MysqlLock::Attempt MysqlLock::attempt_v1(SqlConnection& sql, Env& env, const std::string& resource,
                                         const std::string& token, bool maybe_ours) {
  SqlResult r = sql.query(kBegin, {});
  if (!r.ok()) return Attempt{Outcome::kFail, describe(r), 0, {}};
  r = sql.query(kSelectForUpdate, sql_params({resource}));
  if (!r.ok()) return Attempt{Outcome::kFail, abort_attempt(sql, r), 0, {}};
  if (!r.rows.empty()) return judge_row(sql, env, resource, token, maybe_ours, r.rows[0]);
  // Missing: insert it held. Two sessions here at once is the article's deadlock.
  const TimePoint now = env.now();
  const std::string now_text = format_datetime(now);
  r = sql.query(kInsertHeld, sql_params({resource, format_datetime(now + params_.ttl), token,
                                         now_text, now_text}));
  if (!r.ok()) return Attempt{Outcome::kFail, abort_attempt(sql, r), 0, {}};
  return commit(sql, 1, truncate_to_second(now + params_.ttl));
}

MysqlLock::Attempt MysqlLock::attempt_center(SqlConnection& sql, Env& env,
                                             const std::string& resource, const std::string& token,
                                             bool maybe_ours) {
  SqlResult r = sql.query(kBegin, {});
  if (!r.ok()) return Attempt{Outcome::kFail, describe(r), 0, {}};
  if (std::optional<Attempt> failed = lock_center(sql, resource)) return *failed;
  r = sql.query(kSelectSnapshot, sql_params({resource}));
  if (!r.ok()) return Attempt{Outcome::kFail, abort_attempt(sql, r), 0, {}};
  if (!r.rows.empty()) return judge_row(sql, env, resource, token, maybe_ours, r.rows[0]);
  const std::string now_text = format_datetime(env.now());
  r = sql.query(
      "INSERT INTO t_tag_lock (Flock_name, Fcount, Fstatus, Fcreate_time, Fmodify_time) "
      "VALUES (?, 0, 0, ?, ?)",
      sql_params({resource, now_text, now_text}));
  if (!r.ok()) return Attempt{Outcome::kFail, abort_attempt(sql, r), 0, {}};
  return take(sql, env, resource, token, 0);
}

std::optional<MysqlLock::Attempt> MysqlLock::lock_center(SqlConnection& sql,
                                                         const std::string& resource) {
  const std::string center = center_row(resource);
  SqlResult r = sql.query(kSelectForUpdate, sql_params({center}));
  if (!r.ok()) return Attempt{Outcome::kFail, abort_attempt(sql, r), 0, {}};
  if (r.rows.empty()) {
    // The first acquire ever creates the center row (held by our insert).
    r = sql.query(kInsertCenter, sql_params({center}));
    if (!r.ok()) return Attempt{Outcome::kFail, abort_attempt(sql, r), 0, {}};
  }
  return std::nullopt;
}

MysqlLock::Attempt MysqlLock::attempt_steal(SqlConnection& sql, Env& env,
                                            const std::string& resource, const std::string& token,
                                            bool maybe_ours) {
  SqlResult r = sql.query(kBegin, {});
  if (!r.ok()) return Attempt{Outcome::kFail, describe(r), 0, {}};
  if (params_.version != Version::kV1) {
    if (std::optional<Attempt> failed = lock_center(sql, resource)) return *failed;
  }
  const TimePoint now = env.now();
  const std::string now_text = format_datetime(now);
  r = sql.query(kUpdateSteal, sql_params({format_datetime(now + params_.ttl), token, now_text,
                                          resource, now_text}));
  if (!r.ok()) return Attempt{Outcome::kFail, abort_attempt(sql, r), 0, {}};
  if (r.affected_rows == 0) return steal_missed(sql, env, resource, token, maybe_ours);
  // Ours: the transaction reads its own write, so Fcount is the fence.
  r = sql.query(kSelectCount, sql_params({resource}));
  if (!r.ok()) return Attempt{Outcome::kFail, abort_attempt(sql, r), 0, {}};
  LOCKSIM_ASSERT_MSG(r.rows.size() == 1 && r.rows[0][0], "the row just updated is there");
  return commit(sql, std::stoull(*r.rows[0][0]), truncate_to_second(now + params_.ttl));
}

MysqlLock::Attempt MysqlLock::steal_missed(SqlConnection& sql, Env& env,
                                           const std::string& resource, const std::string& token,
                                           bool maybe_ours) {
  SqlResult r = sql.query(kSelectForUpdate, sql_params({resource}));
  if (!r.ok()) return Attempt{Outcome::kFail, abort_attempt(sql, r), 0, {}};
  if (!r.rows.empty()) {
    const SqlRow& row = r.rows[0];
    LOCKSIM_ASSERT(row.size() == 4 && row[0] && row[1] && row[2] && row[3]);
    if (maybe_ours && *row[1] == "1" && *row[3] == token) {
      // An earlier attempt's COMMIT was lost on the way back but landed.
      return commit(sql, std::stoull(*row[0]), parse_datetime(*row[2]));
    }
    (void)sql.query(kRollback, {});
    return Attempt{Outcome::kFail, "held by another client until " + *row[2], 0, {}};
  }
  // Missing: insert it held. v2/v3 do it under the center lock. v1 has none:
  // inserting inside this transaction would be v1's gap-lock deadlock, so it
  // ends the transaction and inserts on its own (autocommit), as ShedLock
  // does; of racing inserters one wins, the others wait for its row and get
  // 1062.
  const bool alone = params_.version == Version::kV1;
  if (alone) (void)sql.query(kRollback, {});
  const TimePoint now = env.now();
  const std::string now_text = format_datetime(now);
  const TimePoint deadline = truncate_to_second(now + params_.ttl);
  r = sql.query(kInsertHeld, sql_params({resource, format_datetime(now + params_.ttl), token,
                                         now_text, now_text}));
  if (alone) {
    if (r.error_number == sql_errno::kServerLost)
      return Attempt{Outcome::kUnknown, describe(r), 0, {}};
    if (!r.ok()) return Attempt{Outcome::kFail, describe(r), 0, {}};
    return Attempt{Outcome::kOk, "", 1, deadline};
  }
  if (!r.ok()) return Attempt{Outcome::kFail, abort_attempt(sql, r), 0, {}};
  return commit(sql, 1, deadline);
}

MysqlLock::Attempt MysqlLock::judge_row(SqlConnection& sql, Env& env, const std::string& resource,
                                        const std::string& token, bool maybe_ours,
                                        const SqlRow& row) {
  LOCKSIM_ASSERT(row.size() == 4 && row[0] && row[1] && row[2] && row[3]);
  const uint64_t count = std::stoull(*row[0]);
  const bool held = *row[1] == "1";
  const TimePoint deadline = parse_datetime(*row[2]);
  if (held && maybe_ours && *row[3] == token) {
    // An earlier attempt's COMMIT was lost on the way back but landed.
    return commit(sql, count, deadline);
  }
  const TimePoint now = env.now();
  if (held && deadline > now) {
    (void)sql.query(kRollback, {});
    return Attempt{Outcome::kFail, "held by another client until " + *row[2], 0, {}};
  }
  return take(sql, env, resource, token, count);
}

MysqlLock::Attempt MysqlLock::take(SqlConnection& sql, Env& env, const std::string& resource,
                                   const std::string& token, uint64_t count) {
  const TimePoint now = env.now();
  const SqlResult r = sql.query(kUpdateTake, sql_params({format_datetime(now + params_.ttl), token,
                                                         format_datetime(now), resource}));
  if (!r.ok()) return Attempt{Outcome::kFail, abort_attempt(sql, r), 0, {}};
  return commit(sql, count + 1, truncate_to_second(now + params_.ttl));
}

MysqlLock::Attempt MysqlLock::commit(SqlConnection& sql, uint64_t fence, TimePoint deadline) {
  const SqlResult r = sql.query(kCommit, {});
  if (r.error_number == sql_errno::kServerLost) {
    // The COMMIT may have landed: the lock may be ours.
    return Attempt{Outcome::kUnknown, describe(r), 0, {}};
  }
  if (!r.ok()) return Attempt{Outcome::kFail, describe(r), 0, {}};
  return Attempt{Outcome::kOk, "", fence, deadline};
}

ReleaseResult MysqlLock::release(Env& env, const Lease& lease) {
  LOCKSIM_ASSERT_MSG(is_well_formed(lease), "release takes a lease acquire returned");
  SqlConnection& sql = env.sql();
  const std::string now_text = format_datetime(env.now());
  SqlResult r;
  // A stealer takes only a row whose deadline has passed: its release ends
  // the deadline now, so the next one need not wait for it.
  const bool steal = params_.take == Take::kSteal;
  switch (params_.release) {
    case Release::kChecked:
      r = steal ? sql.query(kReleaseCheckedSteal,
                            sql_params({now_text, now_text, lease.resource, lease.token}))
                : sql.query(kReleaseChecked, sql_params({now_text, lease.resource, lease.token}));
      break;
    case Release::kBlind:
      r = steal ? sql.query(kReleaseBlindSteal, sql_params({now_text, now_text, lease.resource}))
                : sql.query(kReleaseBlind, sql_params({now_text, lease.resource}));
      break;
    case Release::kDelete:
      r = sql.query(kReleaseDelete, sql_params({lease.resource, lease.token}));
      break;
  }
  if (r.error_number == sql_errno::kServerLost) return {Outcome::kUnknown, describe(r)};
  if (!r.ok()) return {Outcome::kFail, describe(r)};
  if (r.affected_rows == 1) return {Outcome::kOk, ""};
  return {Outcome::kFail, "lock no longer held by us (expired or taken over)"};
}

namespace {

AlgorithmSpec mysql_spec(const char* name, const char* summary, MysqlLock::Version version,
                         const AlgorithmSpec& (*self)()) {
  AlgorithmSpec s;
  s.name = name;
  s.summary = summary;
  s.backend = "mysql";
  s.params = {
      {"ttl", "31536000s", "expire written to Fdeadline (whole seconds; at least 1s)"},
      {"release", "checked",
       "checked: mark our own row free (Fdesc = token); blind: any holder's; delete: delete "
       "our own row"},
      {"acquire", "read",
       "read: read the row under the lock and judge its deadline on the client (the "
       "article's); steal: UPDATE ... WHERE Flock_name = ? AND Fdeadline < now, INSERT if "
       "missing"},
      {kMaxAttemptsParam, "20", "transactions per acquire before giving up"},
      {kRetryParam, "50ms..150ms", "random backoff between attempts, uniform in the range"},
  };
  s.make = [version, self](const ParamValues& values, const std::string& prefix) {
    const ParamReader r(self(), values, prefix);
    MysqlLock::Params p;
    p.version = version;
    p.ttl = r.positive_duration("ttl");
    if (p.ttl < Duration::seconds(1)) {
      throw ConfigError(r.field("ttl") +
                        ": expected at least 1s (Fdeadline is a DATETIME of whole seconds), got '" +
                        r.text("ttl") + "'");
    }
    const std::string release = r.text("release");
    if (release == "checked") {
      p.release = MysqlLock::Release::kChecked;
    } else if (release == "blind") {
      p.release = MysqlLock::Release::kBlind;
    } else if (release == "delete") {
      p.release = MysqlLock::Release::kDelete;
    } else {
      throw ConfigError(r.field("release") + ": expected checked, blind or delete, got '" +
                        release + "'");
    }
    const std::string take = r.text("acquire");
    if (take == "read") {
      p.take = MysqlLock::Take::kRead;
    } else if (take == "steal") {
      p.take = MysqlLock::Take::kSteal;
    } else {
      throw ConfigError(r.field("acquire") + ": expected read or steal, got '" + take + "'");
    }
    p.retry = read_retry_policy(r);
    return std::unique_ptr<LockAlgorithm>(new MysqlLock(p));
  };
  return s;
}

}  // namespace

const AlgorithmSpec& mysql_v1_spec() {
  static const AlgorithmSpec spec =
      mysql_spec("mysql-v1", "MySQL lock table v1: SELECT FOR UPDATE, then UPDATE or INSERT",
                 MysqlLock::Version::kV1, mysql_v1_spec);
  return spec;
}

const AlgorithmSpec& mysql_center_spec() {
  static const AlgorithmSpec spec = mysql_spec(
      "mysql-center", "MySQL lock table v2: serialise on one center row, then take the lock row",
      MysqlLock::Version::kCenter, mysql_center_spec);
  return spec;
}

const AlgorithmSpec& mysql_segmented_spec() {
  static const AlgorithmSpec spec = mysql_spec(
      "mysql-segmented", "MySQL lock table v3: 100 center rows chosen by CRC32 of the lock name",
      MysqlLock::Version::kSegmented, mysql_segmented_spec);
  return spec;
}

}  // namespace locksim::algorithms
