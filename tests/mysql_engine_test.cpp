// The simulated InnoDB engine alone (sim/mysql/engine.h): parsing, snapshots,
// locks, gap locks, the v1 deadlock and its victim (and its absence at READ
// COMMITTED), lock wait timeouts, disconnects and the DATETIME rules.
#include <gtest/gtest.h>

#include "sim/mysql/engine.h"

namespace locksim::sim::mysql {
namespace {

const char* kForUpdate =
    "SELECT Findex, Fcount, Fstatus FROM t_tag_lock WHERE Flock_name = ? FOR UPDATE";
const char* kInsert = "INSERT INTO t_tag_lock (Flock_name, Fdesc, Fdeadline) VALUES (?, ?, ?)";

SqlResult run(Engine& e, SessionId s, const std::string& sql, std::vector<SqlValue> params = {}) {
  StepResult r = e.execute(s, sql, params);
  EXPECT_FALSE(r.blocked) << sql;
  return r.result;
}

void insert_row(Engine& e, SessionId s, const std::string& name) {
  ASSERT_TRUE(run(e, s, kInsert, {name, "d", "2026-01-01 00:00:00"}).ok());
}

TEST(MysqlEngine, UnknownStatementIs1064NamingIt) {
  Engine e;
  SessionId s = e.open();
  for (const char* sql : {"DROP TABLE t_tag_lock", "SELECT * FROM other WHERE Findex = 1",
                          "SELECT * FROM t_tag_lock WHERE Fdesc <> 'x'", "SELECT 'unterminated",
                          "UPDATE t_tag_lock SET Fcount = WHERE Findex = 1", ""}) {
    SqlResult r = run(e, s, sql);
    EXPECT_EQ(r.error_number, 1064) << sql;
    EXPECT_EQ(r.sqlstate, "42000");
    EXPECT_NE(r.message.find(sql), std::string::npos) << r.message;
  }
  EXPECT_EQ(run(e, s, kInsert, {"only one"}).error_number, 1064);  // placeholder count
}

TEST(MysqlEngine, InsertSelectUpdateAutocommit) {
  Engine e;
  SessionId s = e.open();
  SqlResult ins = run(e, s, kInsert, {"a", "owner", "2026-01-01 00:00:05"});
  ASSERT_TRUE(ins.ok()) << ins.message;
  EXPECT_EQ(ins.affected_rows, 1u);
  EXPECT_EQ(ins.last_insert_id, 1u);
  EXPECT_EQ(run(e, s, kInsert, {"b", "owner", "2026-01-01 00:00:05"}).last_insert_id, 2u);
  SqlResult sel = run(e, s, "select * from `t_tag_lock` where `flock_name` = 'A';");
  ASSERT_EQ(sel.rows.size(), 1u);  // case-insensitive collation
  EXPECT_EQ(sel.columns.size(), 8u);
  EXPECT_EQ(*sel.rows[0][0], "1");
  EXPECT_EQ(*sel.rows[0][7], "1");  // Fstatus default
  SqlResult up =
      run(e, s, "UPDATE t_tag_lock SET Fcount = Fcount + 1, Fstatus = ? WHERE Flock_name = ?",
          {"0", "a"});
  EXPECT_EQ(up.affected_rows, 1u);
  SqlResult same = run(e, s, "UPDATE t_tag_lock SET Fstatus = 0 WHERE Flock_name = 'a'");
  EXPECT_EQ(same.affected_rows, 0u);  // matched, unchanged: 0 as MySQL counts
  SqlResult miss =
      run(e, s, "UPDATE t_tag_lock SET Fstatus = 0 WHERE Flock_name = 'a' AND Fdesc = 'x'");
  EXPECT_EQ(miss.affected_rows, 0u);
  EXPECT_EQ((*e.committed_row("a"))[2], "1");  // Fcount
}

TEST(MysqlEngine, DuplicateKeyIs1062AndRollsBackTheStatementOnly) {
  Engine e;
  SessionId s = e.open();
  insert_row(e, s, "a");
  ASSERT_TRUE(run(e, s, "BEGIN").ok());
  insert_row(e, s, "b");
  SqlResult dup = run(e, s, kInsert, {"A ", "d", "2026-01-01 00:00:00"});  // PAD SPACE, ci
  EXPECT_EQ(dup.error_number, 1062);
  EXPECT_EQ(dup.sqlstate, "23000");
  EXPECT_TRUE(e.in_transaction(s));
  ASSERT_TRUE(run(e, s, "COMMIT").ok());
  EXPECT_TRUE(e.committed_row("b") != nullptr);
}

TEST(MysqlEngine, DatetimeFractionIsTruncatedAsMariaDbDoes) {
  Engine e;
  SessionId s = e.open();
  ASSERT_TRUE(run(e, s, kInsert, {"a", "d", "2026-11-23 14:00:05.999"}).ok());
  EXPECT_EQ((*e.committed_row("a"))[3], "2026-11-23 14:00:05");
  EXPECT_EQ(run(e, s, kInsert, {"b", "d", "2026-13-01 00:00:00"}).error_number, 1292);
  EXPECT_EQ(run(e, s, kInsert, {"c", "d", "garbage"}).error_number, 1292);
  EXPECT_EQ(run(e, s, kInsert, {std::string(129, 'x'), "d", "2026-01-01 00:00:00"}).error_number,
            1406);
}

TEST(MysqlEngine, SnapshotReadBesideLockingRead) {
  Engine e;
  SessionId a = e.open(), b = e.open();
  insert_row(e, a, "k");
  ASSERT_TRUE(run(e, a, "BEGIN").ok());
  const char* plain = "SELECT Fcount FROM t_tag_lock WHERE Flock_name = 'k'";
  EXPECT_EQ(*run(e, a, plain).rows.at(0)[0], "0");  // snapshot taken here
  ASSERT_EQ(run(e, b, "UPDATE t_tag_lock SET Fcount = 7 WHERE Flock_name = 'k'").affected_rows, 1u);
  EXPECT_EQ(*run(e, a, plain).rows.at(0)[0], "0");  // still the snapshot
  EXPECT_EQ(*run(e, a, std::string(plain) + " FOR UPDATE").rows.at(0)[0], "7");  // latest
  EXPECT_EQ(*run(e, a, std::string(plain) + " LOCK IN SHARE MODE").rows.at(0)[0], "7");
  insert_row(e, b, "new");
  EXPECT_TRUE(run(e, a, "SELECT * FROM t_tag_lock WHERE Flock_name = 'new'").rows.empty());
}

TEST(MysqlEngine, RecordLockBlocksUntilCommit) {
  Engine e;
  SessionId a = e.open(), b = e.open();
  insert_row(e, a, "k");
  ASSERT_TRUE(run(e, a, "BEGIN").ok());
  ASSERT_EQ(run(e, a, kForUpdate, {"k"}).rows.size(), 1u);
  ASSERT_TRUE(run(e, b, "BEGIN").ok());
  StepResult blocked = e.execute(b, kForUpdate, {"k"});
  EXPECT_TRUE(blocked.blocked);
  EXPECT_TRUE(e.waiting(b).has_value());
  // A plain read does not wait.
  SessionId c = e.open();
  EXPECT_EQ(run(e, c, "SELECT * FROM t_tag_lock WHERE Flock_name = 'k'").rows.size(), 1u);
  ASSERT_TRUE(
      run(e, a, "UPDATE t_tag_lock SET Fcount = Fcount + 1 WHERE Flock_name = ?", {"k"}).ok());
  EXPECT_TRUE(e.take_finished().empty());
  ASSERT_TRUE(run(e, a, "COMMIT").ok());
  std::vector<FinishedStatement> done = e.take_finished();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].session, b);
  ASSERT_EQ(done[0].result.rows.size(), 1u);
  EXPECT_EQ(*done[0].result.rows[0][1], "1");  // b sees a's committed update
  EXPECT_FALSE(e.waiting(b).has_value());
}

TEST(MysqlEngine, GapLocksAreCompatibleButBlockInserts) {
  Engine e;
  SessionId a = e.open(), b = e.open(), c = e.open();
  ASSERT_TRUE(run(e, a, "BEGIN").ok());
  ASSERT_TRUE(run(e, b, "BEGIN").ok());
  EXPECT_TRUE(run(e, a, kForUpdate, {"k"}).rows.empty());
  EXPECT_TRUE(run(e, b, kForUpdate, {"k"}).rows.empty());  // gap locks do not conflict
  // An autocommit insert into the gap waits for both.
  StepResult ins = e.execute(c, kInsert, {"k", "c", "2026-01-01 00:00:00"});
  EXPECT_TRUE(ins.blocked);
  ASSERT_TRUE(run(e, a, "ROLLBACK").ok());
  EXPECT_TRUE(e.take_finished().empty());  // b still holds its gap lock
  ASSERT_TRUE(run(e, b, "COMMIT").ok());
  std::vector<FinishedStatement> done = e.take_finished();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].result.ok());
  EXPECT_TRUE(e.committed_row("k") != nullptr);
}

// The article's v1 complaint: both sessions find the row missing under FOR
// UPDATE (two compatible gap locks), both INSERT. The first INSERT waits for
// the second session's gap lock; the second closes the cycle. Both weigh the
// same (no undo, one gap lock, one waiting insert intention), so MariaDB
// kills the requester: the second INSERT gets 1213 and the first succeeds.
TEST(MysqlEngine, V1DeadlockKillsTheSecondInserter) {
  Engine e;
  SessionId a = e.open(), b = e.open();
  ASSERT_TRUE(run(e, a, "START TRANSACTION").ok());
  ASSERT_TRUE(run(e, b, "BEGIN").ok());
  EXPECT_TRUE(run(e, a, kForUpdate, {"fresh"}).rows.empty());
  EXPECT_TRUE(run(e, b, kForUpdate, {"fresh"}).rows.empty());
  StepResult first = e.execute(a, kInsert, {"fresh", "a", "2026-01-01 00:00:00"});
  EXPECT_TRUE(first.blocked);
  StepResult second = e.execute(b, kInsert, {"fresh", "b", "2026-01-01 00:00:00"});
  ASSERT_FALSE(second.blocked);
  EXPECT_EQ(second.result.error_number, 1213);
  EXPECT_EQ(second.result.sqlstate, "40001");
  EXPECT_FALSE(e.in_transaction(b));  // the whole transaction rolled back
  EXPECT_EQ(e.deadlocks(), 1u);
  std::vector<FinishedStatement> done = e.take_finished();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].session, a);
  EXPECT_TRUE(done[0].result.ok()) << done[0].result.message;
  ASSERT_TRUE(run(e, a, "COMMIT").ok());
  EXPECT_EQ((*e.committed_row("fresh"))[4], "a");
}

// READ COMMITTED: the same race takes no gap locks, so the first INSERT goes
// through and the second waits for its uncommitted row: 1062 at its commit.
TEST(MysqlEngine, ReadCommittedMissingRowInsertersWaitInsteadOfDeadlocking) {
  Engine e(Isolation::kReadCommitted);
  SessionId a = e.open(), b = e.open();
  ASSERT_TRUE(run(e, a, "BEGIN").ok());
  ASSERT_TRUE(run(e, b, "BEGIN").ok());
  EXPECT_TRUE(run(e, a, kForUpdate, {"fresh"}).rows.empty());
  EXPECT_TRUE(run(e, b, kForUpdate, {"fresh"}).rows.empty());
  ASSERT_TRUE(run(e, a, kInsert, {"fresh", "a", "2026-01-01 00:00:00"}).ok());
  EXPECT_TRUE(e.execute(b, kInsert, {"fresh", "b", "2026-01-01 00:00:00"}).blocked);
  ASSERT_TRUE(run(e, a, "COMMIT").ok());
  std::vector<FinishedStatement> done = e.take_finished();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].session, b);
  EXPECT_EQ(done[0].result.error_number, 1062);
  EXPECT_TRUE(e.in_transaction(b));  // 1062 rolls back the statement only
  EXPECT_EQ(e.deadlocks(), 0u);
}

// Strict mode's DATETIME rules: the calendar, 'T', digits past the sixth
// (a note), and a compared string keeping its fraction.
TEST(MysqlEngine, DatetimeIsReadAsStrictModeReadsIt) {
  Engine e;
  SessionId s = e.open();
  const SqlResult bad = run(e, s, kInsert, {"a", "d", "2100-02-29 00:00:00"});
  EXPECT_EQ(bad.error_number, 1292);
  EXPECT_EQ(bad.sqlstate, "22007");
  const SqlResult cut = run(e, s, kInsert, {"a", "d", "2000-02-29T23:59:59.9999999"});
  ASSERT_TRUE(cut.ok()) << cut.message;
  EXPECT_EQ(cut.warnings, 1u);
  EXPECT_EQ((*e.committed_row("a"))[3], "2000-02-29 23:59:59");
  const char* sel = "SELECT Flock_name FROM t_tag_lock WHERE Flock_name = ? AND Fdeadline = ?";
  EXPECT_EQ(run(e, s, sel, {"a", "2000-02-29 23:59:59"}).rows.size(), 1u);
  EXPECT_TRUE(run(e, s, sel, {"a", "2000-02-29 23:59:59.5"}).rows.empty());
}

// With unequal weights the lighter transaction dies, even when it is not the
// one whose wait closed the cycle.
TEST(MysqlEngine, DeadlockVictimIsTheLighterTransaction) {
  Engine e;
  SessionId setup = e.open();
  insert_row(e, setup, "x");
  insert_row(e, setup, "y");
  SessionId heavy = e.open(), light = e.open();
  ASSERT_TRUE(run(e, heavy, "BEGIN").ok());
  ASSERT_TRUE(run(e, light, "BEGIN").ok());
  ASSERT_TRUE(run(e, light, kForUpdate, {"y"}).ok());
  // heavy writes three rows (undo entries) and locks x.
  insert_row(e, heavy, "h1");
  insert_row(e, heavy, "h2");
  ASSERT_TRUE(run(e, heavy, "UPDATE t_tag_lock SET Fcount = 5 WHERE Flock_name = 'x'").ok());
  EXPECT_TRUE(e.execute(light, kForUpdate, {"x"}).blocked);
  StepResult closing = e.execute(heavy, kForUpdate, {"y"});  // closes the cycle
  // light is the victim, so heavy's wait ends at once: answered, not blocked.
  EXPECT_FALSE(closing.blocked);
  EXPECT_TRUE(closing.result.ok()) << closing.result.message;
  std::vector<FinishedStatement> done = e.take_finished();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].session, light);
  EXPECT_EQ(done[0].result.error_number, 1213);
  EXPECT_FALSE(e.in_transaction(light));
}

TEST(MysqlEngine, LockWaitTimeoutRollsBackTheStatementOnly) {
  Engine e;
  SessionId a = e.open(), b = e.open();
  insert_row(e, a, "k");
  ASSERT_TRUE(run(e, a, "BEGIN").ok());
  ASSERT_TRUE(run(e, a, kForUpdate, {"k"}).ok());
  ASSERT_TRUE(run(e, b, "BEGIN").ok());
  insert_row(e, b, "other");
  ASSERT_TRUE(e.execute(b, kForUpdate, {"k"}).blocked);
  const uint64_t wait = *e.waiting(b);
  e.lock_wait_timeout(b, wait + 1);  // a stale timer does nothing
  EXPECT_TRUE(e.waiting(b).has_value());
  e.lock_wait_timeout(b, wait);
  std::vector<FinishedStatement> done = e.take_finished();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].result.error_number, 1205);
  EXPECT_TRUE(e.in_transaction(b));  // the transaction goes on
  ASSERT_TRUE(run(e, b, "COMMIT").ok());
  EXPECT_TRUE(e.committed_row("other") != nullptr);
}

TEST(MysqlEngine, CloseRollsBackAndFreesLocks) {
  Engine e;
  SessionId a = e.open(), b = e.open();
  ASSERT_TRUE(run(e, a, "BEGIN").ok());
  insert_row(e, a, "k");
  EXPECT_TRUE(e.execute(b, kInsert, {"k", "b", "2026-01-01 00:00:00"}).blocked);
  e.close(a);
  std::vector<FinishedStatement> done = e.take_finished();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].result.ok()) << done[0].result.message;  // a's insert was rolled back
  EXPECT_EQ((*e.committed_row("k"))[4], "b");
  EXPECT_EQ((*e.committed_row("k"))[0], "2");  // AUTO_INCREMENT 1 was not given back
}

TEST(MysqlEngine, DuplicateCheckWaitsForUncommittedInsert) {
  Engine e;
  SessionId a = e.open(), b = e.open();
  ASSERT_TRUE(run(e, a, "BEGIN").ok());
  insert_row(e, a, "k");
  EXPECT_TRUE(e.execute(b, kInsert, {"k", "b", "2026-01-01 00:00:00"}).blocked);
  ASSERT_TRUE(run(e, a, "COMMIT").ok());
  std::vector<FinishedStatement> done = e.take_finished();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].result.error_number, 1062);
}

}  // namespace
}  // namespace locksim::sim::mysql
