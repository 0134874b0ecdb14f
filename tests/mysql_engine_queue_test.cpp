// The simulated InnoDB engine's lock queue and range scans (issue 26 items 4
// and 5), alone: what tests/mysql_differential_test.cpp holds to real MariaDB,
// plus what it cannot show there (a lock wait timeout letting a queue move, a
// refused WHERE, READ COMMITTED over a range).
#include <gtest/gtest.h>

#include "sim/mysql/engine.h"

namespace locksim::sim::mysql {
namespace {

const char* kInsert = "INSERT INTO t_tag_lock (Flock_name, Fdeadline) VALUES (?, ?)";
const char* kShare =
    "SELECT Flock_name, Fcount FROM t_tag_lock WHERE Flock_name = ? LOCK IN SHARE MODE";
const char* kForUpdate =
    "SELECT Flock_name, Fcount FROM t_tag_lock WHERE Flock_name = ? FOR UPDATE";

SqlResult run(Engine& e, SessionId s, const std::string& sql, std::vector<SqlValue> params = {}) {
  StepResult r = e.execute(s, sql, params);
  EXPECT_FALSE(r.blocked) << sql;
  return r.result;
}

bool blocks(Engine& e, SessionId s, const std::string& sql, std::vector<SqlValue> params = {}) {
  return e.execute(s, sql, params).blocked;
}

// Rows a, c, e, g (Findex 1..4) with deadlines 10, 20, 30, 40 s.
void four_rows(Engine& e, SessionId s) {
  for (const char* row : {"a|10", "c|20", "e|30", "g|40"}) {
    const std::string name(1, row[0]);
    ASSERT_TRUE(run(e, s, kInsert, {name, std::string("2026-01-01 00:00:") + (row + 2)}).ok());
  }
}

std::vector<std::string> names(const SqlResult& r) {
  std::vector<std::string> out;
  for (const SqlRow& row : r.rows) out.push_back(row.at(0).value_or("NULL"));
  return out;
}

TEST(MysqlEngineQueue, AWaitingExclusiveRequestBlocksALaterSharedOne) {
  Engine e;
  SessionId a = e.open(), b = e.open(), c = e.open();
  ASSERT_TRUE(run(e, a, kInsert, {"k", "2026-01-01 00:00:00"}).ok());
  ASSERT_TRUE(run(e, a, "BEGIN").ok());
  ASSERT_EQ(run(e, a, kShare, {"k"}).rows.size(), 1u);
  ASSERT_TRUE(run(e, b, "BEGIN").ok());
  EXPECT_TRUE(blocks(e, b, kForUpdate, {"k"}));
  ASSERT_TRUE(run(e, c, "BEGIN").ok());
  EXPECT_TRUE(blocks(e, c, kShare, {"k"}));  // queued behind b, though a's S is compatible
  // b's wait times out: its request leaves the queue and c's goes through.
  e.lock_wait_timeout(b, *e.waiting(b));
  std::vector<FinishedStatement> done = e.take_finished();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].session, b);
  EXPECT_EQ(done[0].result.error_number, 1205);
  EXPECT_EQ(done[1].session, c);
  EXPECT_TRUE(done[1].result.ok());
}

TEST(MysqlEngineQueue, ASharedHolderAskingForExclusiveBehindAWaiterDeadlocks) {
  Engine e;
  SessionId a = e.open(), b = e.open();
  ASSERT_TRUE(run(e, a, kInsert, {"k", "2026-01-01 00:00:00"}).ok());
  ASSERT_TRUE(run(e, a, "BEGIN").ok());
  ASSERT_EQ(run(e, a, kShare, {"k"}).rows.size(), 1u);
  ASSERT_TRUE(run(e, b, "BEGIN").ok());
  EXPECT_TRUE(blocks(e, b, kForUpdate, {"k"}));
  // a's X queues behind b's waiting X, which waits for a's S: b, the
  // lighter, is the victim, and a gets its X at once.
  EXPECT_EQ(run(e, a, kForUpdate, {"k"}).rows.size(), 1u);
  std::vector<FinishedStatement> done = e.take_finished();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].session, b);
  EXPECT_EQ(done[0].result.error_number, 1213);
  EXPECT_EQ(e.deadlocks(), 1u);
}

TEST(MysqlEngineQueue, WaitersOnARolledBackInsertDeadlockOnTheirOwn) {
  Engine e;
  SessionId a = e.open(), b = e.open(), c = e.open();
  for (SessionId s : {a, b, c}) ASSERT_TRUE(run(e, s, "BEGIN").ok());
  ASSERT_TRUE(run(e, a, kInsert, {"k", "2026-01-01 00:00:00"}).ok());
  EXPECT_TRUE(blocks(e, b, kInsert, {"k", "2026-01-01 00:00:00"}));
  EXPECT_TRUE(blocks(e, c, kInsert, {"k", "2026-01-01 00:00:00"}));
  ASSERT_TRUE(run(e, a, "ROLLBACK").ok());
  // Both waiters' locks live on as gap locks; their inserts wait for each
  // other's, and the older waiter, b, is the victim: c inserts.
  std::vector<FinishedStatement> done = e.take_finished();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].session, b);
  EXPECT_EQ(done[0].result.error_number, 1213);
  EXPECT_EQ(done[1].session, c);
  EXPECT_EQ(done[1].result.affected_rows, 1u);
}

TEST(MysqlEngineQueue, RangesParseAndOthersAreRefusedWithAReason) {
  Engine e;
  SessionId s = e.open();
  four_rows(e, s);
  EXPECT_EQ(
      names(run(e, s, "SELECT Flock_name FROM t_tag_lock WHERE Flock_name BETWEEN 'b' AND 'e'")),
      (std::vector<std::string>{"c", "e"}));
  EXPECT_EQ(names(run(e, s, "SELECT Flock_name FROM t_tag_lock WHERE Findex>=2 AND Findex<4")),
            (std::vector<std::string>{"c", "e"}));
  EXPECT_EQ(names(run(e, s, "SELECT Flock_name FROM t_tag_lock WHERE Fdeadline > ? AND Fcount <= 0",
                      {"2026-01-01 00:00:30"})),
            (std::vector<std::string>{"g"}));
  for (const char* sql : {"SELECT * FROM t_tag_lock WHERE Fdesc <> 'x'",
                          "SELECT * FROM t_tag_lock WHERE Fmodify_time < '2026-01-01 00:00:00'",
                          "SELECT * FROM t_tag_lock WHERE Fdesc IS NULL",
                          "SELECT * FROM t_tag_lock WHERE Findex = 1 OR Findex = 2"}) {
    SqlResult r = run(e, s, sql);
    EXPECT_EQ(r.error_number, 1064) << sql;
    EXPECT_NE(r.message.find("outside the SQL subset"), std::string::npos) << r.message;
  }
  for (const char* sql : {"SELECT * FROM t_tag_lock WHERE Findex < ",
                          "SELECT * FROM t_tag_lock "
                          "WHERE Findex BETWEEN 1"}) {
    EXPECT_EQ(run(e, s, sql).error_number, 1064) << sql;
  }
}

TEST(MysqlEngineQueue, AnUnindexedUpdateLocksEveryRowAndTheEnd) {
  Engine e;
  SessionId a = e.open(), b = e.open();
  four_rows(e, a);
  ASSERT_TRUE(run(e, a, "BEGIN").ok());
  EXPECT_EQ(
      run(e, a, "UPDATE t_tag_lock SET Fcount = 1 WHERE Fdeadline < ?", {"2026-01-01 00:00:25"})
          .affected_rows,
      2u);
  EXPECT_TRUE(blocks(e, b, kForUpdate, {"g"}));  // scanned, not matched: locked
  e.lock_wait_timeout(b, *e.waiting(b));
  (void)e.take_finished();
  EXPECT_TRUE(blocks(e, b, kInsert, {"z", "2026-01-01 00:00:00"}));  // the supremum's gap
  ASSERT_TRUE(run(e, a, "COMMIT").ok());
  ASSERT_EQ(e.take_finished().size(), 1u);
}

TEST(MysqlEngineQueue, ReadCommittedRangeLocksOnlyTheMatches) {
  Engine e(Isolation::kReadCommitted);
  SessionId a = e.open(), b = e.open();
  four_rows(e, a);
  ASSERT_TRUE(run(e, a, "BEGIN").ok());
  EXPECT_EQ(names(run(e, a, "SELECT Flock_name FROM t_tag_lock WHERE Flock_name < 'd' FOR UPDATE")),
            (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(run(e, b, kForUpdate, {"e"}).rows.size(), 1u);  // past the range: not locked
  EXPECT_EQ(run(e, b, kInsert, {"b", "2026-01-01 00:00:00"}).affected_rows, 1u);  // no gaps
  EXPECT_TRUE(blocks(e, b, kForUpdate, {"c"}));
  ASSERT_TRUE(run(e, a, "COMMIT").ok());
  ASSERT_EQ(e.take_finished().size(), 1u);
}

}  // namespace
}  // namespace locksim::sim::mysql
