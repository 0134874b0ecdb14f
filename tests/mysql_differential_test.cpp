// The simulated InnoDB (sim/mysql/, through its backend seam) against real
// MariaDB 10.11 (started here on loopback): the same multi-session scripts
// through the same SqlConnection seam must give the same results, the same
// error numbers and SQLSTATEs, and block at the same statements.
//
// Each script is a list of steps; a step hands one statement to one session
// (sessions s1, s2, ... each have their own connection and, live, their own
// thread), closes a session, or lets time pass. After every step the
// transcript records, session by session, what answered: the statement just
// sent ("-> ok ..." or "-> error N (STATE)") or "-> blocks", and any earlier
// blocked statement that answered since ("(s1's earlier statement) -> ...").
// Error messages are not compared (the simulation words its own); rows,
// affected rows, last insert ids, numbers and SQLSTATEs are.
//
// "Blocks" is decided without guessing on either side: the simulation lets
// 100 ms of virtual time pass (no statement in these scripts takes longer
// unless it waits for a lock, and lock waits end only by the holder or the
// 1 s innodb_lock_wait_timeout); live, each unanswered statement is watched
// until it either answers or its session shows trx_state 'LOCK WAIT' in
// information_schema.INNODB_TRX, so a slow machine cannot turn a late answer
// into a "block".
//
// Skips (with a message) when mariadb-server is not installed, except when
// CI=true: then it fails, so a CI machine without it cannot pass by testing
// nothing. One mariadbd (innodb_lock_wait_timeout=1) serves every script;
// each script uses its own lock names, and may give its sessions a longer
// lock wait timeout (Script::lock_wait_timeout).
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "live/mariadb_process.h"
#include "mysql_differential_queue.h"
#include "mysql_differential_ranges.h"
#include "mysql_differential_sessions.h"
#include "real_servers.h"
#include "sim/mysql/schema.h"

namespace locksim {
namespace {

using difftest::close_session;
using difftest::sql;
using difftest::Step;
using difftest::wait;

const char* kForUpdate =
    "SELECT Flock_name, Fcount, Fstatus FROM t_tag_lock WHERE Flock_name = ? FOR UPDATE";
const char* kSnapshot = "SELECT Flock_name, Fcount, Fstatus FROM t_tag_lock WHERE Flock_name = ?";
const char* kInsert = "INSERT INTO t_tag_lock (Flock_name, Fcount, Fdesc) VALUES (?, ?, ?)";
const char* kBump = "UPDATE t_tag_lock SET Fcount = Fcount + 1 WHERE Flock_name = ?";

// v1's deadlock: both find the row missing (gap locks, compatible), both
// INSERT; InnoDB kills one, the other's INSERT goes through.
std::vector<Step> missing_key_race() {
  return {sql(1, "BEGIN"),
          sql(2, "BEGIN"),
          sql(1, kForUpdate, {"race"}),
          sql(2, kForUpdate, {"race"}),
          sql(1, kInsert, {"race", "1", "s1"}),
          sql(2, kInsert, {"race", "1", "s2"}),
          sql(1, "COMMIT"),
          sql(2, "COMMIT"),
          sql(2, "SELECT Flock_name, Fcount, Fdesc FROM t_tag_lock WHERE Flock_name = 'race'")};
}

// The deadlock victim is the lighter transaction (undo entries and locks),
// not the one whose wait closed the cycle: s1 has written three rows before
// the race, so s2 dies although s1 closes the cycle.
std::vector<Step> deadlock_victim_is_the_lighter() {
  return {sql(1, "BEGIN"),
          sql(1, kInsert, {"heavy-1", "0", ""}),
          sql(1, kInsert, {"heavy-2", "0", ""}),
          sql(1, kInsert, {"heavy-3", "0", ""}),
          sql(1, kForUpdate, {"victim"}),
          sql(2, "BEGIN"),
          sql(2, kForUpdate, {"victim"}),
          sql(2, kInsert, {"victim", "1", "s2"}),
          sql(1, kInsert, {"victim", "1", "s1"}),
          sql(1, "COMMIT"),
          sql(2, "COMMIT"),
          sql(2, "SELECT Flock_name, Fdesc FROM t_tag_lock WHERE Flock_name = 'victim'")};
}

// A locking read or UPDATE that finds its row through uniq_Flock_name takes a
// next-key lock (the record and the gap before it): an INSERT of a name that
// sorts just before it waits, and so does the inserting holder itself when
// another session's request for the row is queued in that gap — the deadlock
// behind v2's first acquire of each lock name ('article-..' < 'center_lock').
std::vector<Step> next_key_lock_on_a_found_row() {
  return {sql(1, kInsert, {"center_lock", "0", "center"}),
          sql(1, "BEGIN"),
          sql(1, kForUpdate, {"center_lock"}),
          sql(2, kInsert, {"article-01", "0", ""}),
          sql(1, "COMMIT"),
          sql(1, "BEGIN"),
          sql(1, kBump, {"center_lock"}),
          sql(2, kInsert, {"article-02", "0", ""}),
          sql(1, "COMMIT"),
          sql(1, "BEGIN"),
          sql(1, kForUpdate, {"center_lock"}),
          sql(2, "BEGIN"),
          sql(2, kForUpdate, {"center_lock"}),
          sql(1, kInsert, {"article-03", "0", "s1"}),
          sql(1, "COMMIT"),
          sql(2, "ROLLBACK")};
}

// innodb_lock_wait_timeout=1: the waiting statement gets 1205 and only it is
// rolled back (s2's earlier INSERT survives and commits).
std::vector<Step> lock_wait_timeout() {
  return {sql(1, kInsert, {"lwt-a", "0", ""}),
          sql(1, "BEGIN"),
          sql(1, kBump, {"lwt-a"}),
          sql(2, "BEGIN"),
          sql(2, kInsert, {"lwt-b", "5", ""}),
          sql(2, kBump, {"lwt-a"}),
          wait(Duration::millis(1500)),
          sql(2, "COMMIT"),
          sql(1, "COMMIT"),
          sql(2, kSnapshot, {"lwt-a"}),
          sql(2, kSnapshot, {"lwt-b"})};
}

// REPEATABLE READ: a plain SELECT reads the snapshot and never waits; a
// locking read waits for the row lock, then reads the latest committed row;
// the snapshot stays what it was until the transaction writes the row.
std::vector<Step> snapshot_beside_locking_read() {
  return {sql(1, kInsert, {"snap", "0", ""}),
          sql(1, "BEGIN"),
          sql(1, kSnapshot, {"snap"}),
          sql(2, "BEGIN"),
          sql(2, kForUpdate, {"snap"}),
          sql(2, kBump, {"snap"}),
          sql(1, kSnapshot, {"snap"}),
          sql(1, kForUpdate, {"snap"}),
          sql(2, "COMMIT"),
          sql(1, kSnapshot, {"snap"}),
          sql(1, kForUpdate, {"snap"}),
          sql(1, kBump, {"snap"}),
          sql(1, kSnapshot, {"snap"}),
          sql(1, "COMMIT")};
}

// 1062 at once on a committed row (statement rolled back, transaction open),
// and after a wait on an uncommitted one: 1062 if its inserter commits, the
// insert goes through if it rolls back.
std::vector<Step> duplicate_key() {
  return {sql(1, kInsert, {"dup", "0", ""}),
          sql(1, "BEGIN"),
          sql(1, kInsert, {"dup-2", "0", ""}),
          sql(1, kInsert, {"DUP ", "0", ""}),
          sql(1, "COMMIT"),
          sql(1, kSnapshot, {"dup-2"}),
          sql(1, "BEGIN"),
          sql(1, kInsert, {"dup-3", "0", "s1"}),
          sql(2, kInsert, {"dup-3", "0", "s2"}),
          sql(1, "COMMIT"),
          sql(1, "BEGIN"),
          sql(1, kInsert, {"dup-4", "0", "s1"}),
          sql(2, kInsert, {"dup-4", "0", "s2"}),
          sql(1, "ROLLBACK"),
          sql(1, "SELECT Flock_name, Fdesc FROM t_tag_lock WHERE Flock_name = 'dup-4'")};
}

// A closed connection rolls back its transaction and frees its locks: the
// waiter goes on, and the closed session's uncommitted change is gone.
std::vector<Step> disconnect_releases() {
  return {sql(1, kInsert, {"disc", "0", ""}), sql(1, "BEGIN"),
          sql(1, kForUpdate, {"disc"}),       sql(1, kBump, {"disc"}),
          sql(2, kForUpdate, {"disc"}),       close_session(1),
          sql(1, kSnapshot, {"disc"})};
}

// DATETIME(0) and a fractional value: MariaDB truncates (no rounding unless
// sql_mode has TIME_ROUND_FRACTIONAL), also for .5 and .999999.
std::vector<Step> datetime_fraction() {
  const char* ins = "INSERT INTO t_tag_lock (Flock_name, Fdeadline, Fmodify_time) VALUES (?, ?, ?)";
  const char* sel = "SELECT Fdeadline, Fmodify_time FROM t_tag_lock WHERE Flock_name = ?";
  return {sql(1, ins, {"dt-1", "2026-11-23 14:00:05.999999", "2026-11-23 14:00:05.5"}),
          sql(1, sel, {"dt-1"}),
          sql(1, ins, {"dt-2", "2026-12-31 23:59:59.9", "2026-01-01 00:00:00.000001"}),
          sql(1, sel, {"dt-2"}),
          sql(1, "UPDATE t_tag_lock SET Fdeadline = ? WHERE Flock_name = ?",
              {"2027-02-28 23:59:59.75", "dt-1"}),
          sql(1, sel, {"dt-1"})};
}

// The DATETIME rules below hold in strict mode (STRICT_TRANS_TABLES, on by
// default in 10.11; SqlModeIsTheOneTheSimulationFollows checks it). They
// speak to Fdeadline, the column whose value decides who holds a lock.
const char* kInsertDeadline = "INSERT INTO t_tag_lock (Flock_name, Fdeadline) VALUES (?, ?)";
const char* kSetDeadline = "UPDATE t_tag_lock SET Fdeadline = ? WHERE Flock_name = ?";
const char* kDeadlineOf = "SELECT Fdeadline FROM t_tag_lock WHERE Flock_name = ?";

// A date the calendar does not have is refused with 1292 (22007), also when
// every field is in range on its own: February 30, April 31, February 29
// outside a leap year (2100 is not one, 2000 is). The row keeps its value.
std::vector<Step> datetime_invalid_calendar_date() {
  return {sql(1, kInsertDeadline, {"cal-1", "2024-02-30 10:00:00"}),
          sql(1, kInsertDeadline, {"cal-1", "2023-02-29 10:00:00"}),
          sql(1, kInsertDeadline, {"cal-1", "2100-02-29 10:00:00"}),
          sql(1, kInsertDeadline, {"cal-1", "2024-02-29 10:00:00"}),
          sql(1, kInsertDeadline, {"cal-2", "2000-02-29 10:00:00"}),
          sql(1, kSetDeadline, {"2024-04-31 10:00:00", "cal-1"}),
          sql(1, kSetDeadline, {"2024-12-31 23:59:59", "cal-2"}),
          sql(1, kDeadlineOf, {"cal-1"}),
          sql(1, kDeadlineOf, {"cal-2"})};
}

// A 'T' between the date and the time (ISO 8601, what many clients format)
// is accepted and stored as the same DATETIME, in a value and in a WHERE;
// a lower-case 't' is not.
std::vector<Step> datetime_t_separator() {
  return {sql(1, kInsertDeadline, {"iso-1", "2026-03-01t12:00:01"}),
          sql(1, kInsertDeadline, {"iso-1", "2026-03-01T12:00:01"}),
          sql(1, kDeadlineOf, {"iso-1"}),
          sql(1, kSetDeadline, {"2026-03-01T12:00:02.5", "iso-1"}),
          sql(1, kDeadlineOf, {"iso-1"}),
          sql(1, "SELECT Flock_name FROM t_tag_lock WHERE Flock_name = ? AND Fdeadline = ?",
              {"iso-1", "2026-03-01T12:00:02"})};
}

// More than six fractional digits: cut off (not rounded, not refused) with a
// note (1265), also when all of them are nines, and also by an UPDATE that
// changes nothing; six or fewer go silently, and so does a bare '.'.
std::vector<Step> datetime_long_fraction() {
  return {sql(1, kInsertDeadline, {"frac-1", "2026-03-01 12:00:01.1234567"}),
          sql(1, kInsertDeadline, {"frac-2", "2026-03-01 12:00:01.9999999999"}),
          sql(1, kInsertDeadline, {"frac-3", "2026-03-01 12:00:01."}),
          sql(1, kDeadlineOf, {"frac-1"}),
          sql(1, kDeadlineOf, {"frac-2"}),
          sql(1, kSetDeadline, {"2026-03-01 12:00:01.00000001", "frac-2"}),
          sql(1, kSetDeadline, {"2026-03-01 12:00:03.00000001", "frac-1"}),
          sql(1, kSetDeadline, {"2026-03-01 12:00:04.999999", "frac-1"}),
          sql(1, kDeadlineOf, {"frac-1"}),
          sql(1, kDeadlineOf, {"frac-3"})};
}

// A DATETIME compared with a string is compared as DATETIME(6): the string's
// fraction counts, so '... 00.5' does not equal a stored '... 00' (storing
// it would have cut the .5 off). As a bound value and as a literal, in
// SELECT, UPDATE and DELETE.
std::vector<Step> datetime_compare_fraction() {
  const char* sel = "SELECT Flock_name FROM t_tag_lock WHERE Flock_name = ? AND Fdeadline = ?";
  return {sql(1, kInsertDeadline, {"cmp-1", "2026-03-01 12:00:00.5"}),
          sql(1, sel, {"cmp-1", "2026-03-01 12:00:00.5"}),
          sql(1, sel, {"cmp-1", "2026-03-01 12:00:00.000001"}),
          sql(1, sel, {"cmp-1", "2026-03-01 12:00:00.000000"}),
          sql(1, sel, {"cmp-1", "2026-03-01 12:00:00"}),
          sql(1,
              "SELECT Flock_name FROM t_tag_lock WHERE Flock_name = 'cmp-1' AND "
              "Fdeadline = '2026-03-01 12:00:00.5'"),
          sql(1, "UPDATE t_tag_lock SET Fcount = 7 WHERE Flock_name = ? AND Fdeadline = ?",
              {"cmp-1", "2026-03-01 12:00:00.25"}),
          sql(1, "DELETE FROM t_tag_lock WHERE Flock_name = ? AND Fdeadline = ?",
              {"cmp-1", "2026-03-01 12:00:00.75"}),
          sql(1, "UPDATE t_tag_lock SET Fcount = 7 WHERE Flock_name = ? AND Fdeadline = ?",
              {"cmp-1", "2026-03-01 12:00:00"}),
          sql(1, "SELECT Flock_name, Fcount FROM t_tag_lock WHERE Flock_name = ?", {"cmp-1"})};
}

// READ COMMITTED (transaction_isolation of every session): v1's race of
// missing_key_race without the deadlock. Neither locking read finds the row
// nor locks any gap, so s1's INSERT goes through, s2's waits for s1's
// uncommitted row and gets 1062 when s1 commits.
std::vector<Step> read_committed_missing_key_race() {
  return {sql(1, "BEGIN"),
          sql(2, "BEGIN"),
          sql(1, kForUpdate, {"rc-race"}),
          sql(2, kForUpdate, {"rc-race"}),
          sql(1, kInsert, {"rc-race", "1", "s1"}),
          sql(2, kInsert, {"rc-race", "1", "s2"}),
          sql(1, "COMMIT"),
          sql(2, "COMMIT"),
          sql(2, "SELECT Flock_name, Fcount, Fdesc FROM t_tag_lock WHERE Flock_name = 'rc-race'")};
}

// READ COMMITTED, the rest of what differs: a found row is locked alone (no
// next-key lock: an insert just before it goes ahead, unlike
// next_key_lock_on_a_found_row), and each plain SELECT reads a new snapshot
// (the other session's commit shows inside an open transaction).
std::vector<Step> read_committed_no_gap_new_snapshot() {
  return {sql(1, kInsert, {"rc-center", "0", "center"}),
          sql(1, "BEGIN"),
          sql(1, kForUpdate, {"rc-center"}),
          sql(2, kInsert, {"rc-article-01", "0", ""}),
          sql(2, "BEGIN"),
          sql(2, kForUpdate, {"rc-center"}),
          sql(1, kInsert, {"rc-article-02", "0", "s1"}),
          sql(1, "COMMIT"),
          sql(2, "COMMIT"),
          sql(1, "BEGIN"),
          sql(1, kSnapshot, {"rc-center"}),
          sql(2, kBump, {"rc-center"}),
          sql(1, kSnapshot, {"rc-center"}),
          sql(1, "COMMIT")};
}

struct Script {
  const char* name;
  int sessions;
  std::vector<Step> (*steps)();
  sim::mysql::Isolation isolation = sim::mysql::Isolation::kRepeatableRead;
  // Whole seconds (innodb_lock_wait_timeout's unit). Scripts that keep
  // sessions waiting over many steps need longer than 1 s live, where each
  // step's settling takes a few hundred milliseconds.
  Duration lock_wait_timeout = Duration::seconds(1);
};

const std::vector<Script>& scripts() {
  static const std::vector<Script> all = {
      {"missing_key_race", 2, missing_key_race},
      {"deadlock_victim_is_the_lighter", 2, deadlock_victim_is_the_lighter},
      {"next_key_lock_on_a_found_row", 2, next_key_lock_on_a_found_row},
      {"lock_wait_timeout", 2, lock_wait_timeout},
      {"snapshot_beside_locking_read", 2, snapshot_beside_locking_read},
      {"duplicate_key", 2, duplicate_key},
      {"disconnect_releases", 2, disconnect_releases},
      {"datetime_fraction", 1, datetime_fraction},
      {"datetime_invalid_calendar_date", 1, datetime_invalid_calendar_date},
      {"datetime_t_separator", 1, datetime_t_separator},
      {"datetime_long_fraction", 1, datetime_long_fraction},
      {"datetime_compare_fraction", 1, datetime_compare_fraction},
      {"read_committed_missing_key_race", 2, read_committed_missing_key_race,
       sim::mysql::Isolation::kReadCommitted},
      {"read_committed_no_gap_new_snapshot", 2, read_committed_no_gap_new_snapshot,
       sim::mysql::Isolation::kReadCommitted},
      {"queue_duplicate_waiters_deadlock", 3, difftest::queue_duplicate_waiters_deadlock,
       sim::mysql::Isolation::kRepeatableRead, Duration::seconds(10)},
      {"queue_shared_holder_upgrade_deadlock", 2, difftest::queue_shared_holder_upgrade_deadlock,
       sim::mysql::Isolation::kRepeatableRead, Duration::seconds(10)},
      {"queue_waiting_request_blocks_later", 3, difftest::queue_waiting_request_blocks_later,
       sim::mysql::Isolation::kRepeatableRead, Duration::seconds(10)},
      {"range_less_than_on_unique_key", 2, difftest::range_less_than_on_unique_key},
      {"range_between_and_past_the_end", 2, difftest::range_between_and_past_the_end},
      {"range_unindexed_and_primary_key", 2, difftest::range_unindexed_and_primary_key},
      {"range_steal_expired_row", 2, difftest::range_steal_expired_row},
  };
  return all;
}

class MysqlDifferential : public ::testing::TestWithParam<Script> {
 protected:
  static void SetUpTestSuite() {
    if (const std::string why = live::MariadbProcess::missing(); !why.empty()) {
      skip_reason_ = why;
      return;
    }
    server_ = live::MariadbProcess::start({.lock_wait_timeout_s = 1});
  }
  static void TearDownTestSuite() { server_.reset(); }

  static inline std::unique_ptr<live::MariadbProcess> server_;
  static inline std::string skip_reason_;
};

TEST_P(MysqlDifferential, SimulationAnswersAsMariaDbDoes) {
  LOCKSIM_SKIP_WITHOUT("mariadb-server", skip_reason_);
  ASSERT_NE(server_, nullptr) << "mariadbd did not start";
  const Script& script = GetParam();
  const std::vector<std::string> sim = difftest::run_simulated(
      script.steps(), script.sessions, script.lock_wait_timeout, script.isolation);
  const std::vector<std::string> real = difftest::run_live(
      script.steps(), script.sessions, server_->port(), script.isolation, script.lock_wait_timeout);
  // LOCKSIM_MYSQL_TRACE=1 shows what real MariaDB answered, step by step.
  if (std::getenv("LOCKSIM_MYSQL_TRACE") != nullptr) {
    for (const std::string& line : real) std::cerr << "  " << line << "\n";
  }
  ASSERT_EQ(sim.size(), real.size());
  for (size_t i = 0; i < real.size(); ++i) EXPECT_EQ(sim[i], real[i]) << "line " << i;
}

// The DATETIME rules the simulation follows (an invalid date refused, not
// stored as zeros) are strict mode's: hold the real server to the sql_mode
// they were taken from, so a changed default cannot pass unnoticed.
TEST_F(MysqlDifferential, SqlModeIsTheOneTheSimulationFollows) {
  LOCKSIM_SKIP_WITHOUT("mariadb-server", skip_reason_);
  ASSERT_NE(server_, nullptr) << "mariadbd did not start";
  live::MariadbConnection c(
      {.host = "127.0.0.1", .port = server_->port(), .database = "locksim", .user = "root"},
      Duration::seconds(30), "sql_mode");
  const SqlResult r = c.query("SELECT @@SESSION.sql_mode", {});
  ASSERT_TRUE(r.ok()) << r.message;
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0][0], SqlValue(sim::mysql::kSqlMode));
}

INSTANTIATE_TEST_SUITE_P(Scripts, MysqlDifferential, ::testing::ValuesIn(scripts()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace locksim
