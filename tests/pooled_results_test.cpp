// What the models' pools promise (env/argv_pool.h, sim/waiter_slots.h and
// the results that give their vectors back): a pooled string or vector
// holds exactly what it was given, whatever it held before; a result moved
// onto another takes every field; a handle to a waiter that has gone finds
// nothing, even when its slot holds another waiter.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "env/argv_pool.h"
#include "env/sql_connection.h"
#include "env/zk_connection.h"
#include "sim/mysql/engine.h"
#include "sim/waiter_slots.h"
#include "sim/world.h"

namespace locksim {
namespace {

TEST(WaiterSlots, AHandleFindsItsWaiterUntilClosedAndNeverAfter) {
  sim::Waiter first, second;
  const sim::WaiterSlots::Handle a = sim::WaiterSlots::open(&first);
  EXPECT_EQ(sim::WaiterSlots::find(a), &first);
  sim::WaiterSlots::close(a);
  EXPECT_EQ(sim::WaiterSlots::find(a), nullptr);
  // The freed slot is taken again: the old handle still finds nothing.
  const sim::WaiterSlots::Handle b = sim::WaiterSlots::open(&second);
  EXPECT_EQ(b.slot, a.slot);
  EXPECT_EQ(sim::WaiterSlots::find(b), &second);
  EXPECT_EQ(sim::WaiterSlots::find(a), nullptr);
  sim::WaiterSlots::close(b);
  EXPECT_EQ(sim::WaiterSlots::find(b), nullptr);
}

TEST(ArgvPool, ATextGivenBackIsTheRoomOfTheNextAndHoldsOnlyItsValue) {
  const std::string longer(120, 'x');
  std::string text = argv_pool::take_text(longer);
  EXPECT_EQ(text, longer);
  const char* room = text.data();
  argv_pool::give_back_text(std::move(text));
  std::string next = argv_pool::take_text("SELECT a FROM t WHERE b = ?");
  EXPECT_EQ(next, "SELECT a FROM t WHERE b = ?");
  EXPECT_EQ(next.data(), room);  // the same room, no allocation
  // A text a string keeps inline is neither taken from the pool nor kept.
  const std::string shorter = argv_pool::take_text("BEGIN");
  EXPECT_EQ(shorter, "BEGIN");
  argv_pool::give_back_text(std::move(next));
  EXPECT_EQ(argv_pool::take_text("COMMIT"), "COMMIT");
  EXPECT_EQ(argv_pool::take_text(longer).data(), room);
}

SqlResult a_select_result() {
  SqlResult r;
  r.columns = {"Fcount", "Fdesc"};
  r.rows = {{std::string("3"), std::string("a token past fifteen characters")},
            {std::string("4"), std::nullopt}};
  r.affected_rows = 2;
  r.last_insert_id = 5;
  r.warnings = 1;
  return r;
}

TEST(PooledResults, ASqlResultMovedOntoAnotherTakesEveryField) {
  SqlResult target = SqlResult::error(sql_errno::kDeadlock, "Deadlock found");
  target.columns = {"old"};
  target.rows = {{std::string("old row")}};
  target = a_select_result();
  const SqlResult expected = a_select_result();
  EXPECT_EQ(target.error_number, 0);
  EXPECT_EQ(target.sqlstate, expected.sqlstate);
  EXPECT_EQ(target.message, "");
  EXPECT_EQ(target.columns, expected.columns);
  EXPECT_EQ(target.rows, expected.rows);
  EXPECT_EQ(target.affected_rows, 2u);
  EXPECT_EQ(target.last_insert_id, 5u);
  EXPECT_EQ(target.warnings, 1u);
  // And an error moved onto a SELECT's result leaves no rows behind.
  target = SqlResult::error(sql_errno::kLockWaitTimeout, "Lock wait timeout exceeded");
  EXPECT_EQ(target.error_number, sql_errno::kLockWaitTimeout);
  EXPECT_EQ(target.sqlstate, "HY000");
  EXPECT_TRUE(target.columns.empty());
  EXPECT_TRUE(target.rows.empty());
}

TEST(PooledResults, AZkChildrenResultMovedOntoAnotherTakesEveryField) {
  ZkChildrenResult target(ZkError::kNoNode, {"stale-child-name-past-inline"}, ZkStat{});
  ZkStat stat;
  stat.cversion = 4;
  stat.num_children = 2;
  target = ZkChildrenResult(ZkError::kOk, {"_c_a-lock-0000000001", "_c_b-lock-0000000002"}, stat);
  EXPECT_EQ(target.error, ZkError::kOk);
  EXPECT_EQ(target.children,
            (std::vector<std::string>{"_c_a-lock-0000000001", "_c_b-lock-0000000002"}));
  EXPECT_TRUE(target.stat == stat);
}

// A vector given back by a result comes out of the pool with unspecified
// contents; the takers overwrite every element (the server's SELECT and
// getChildren). Two results in a row must not see each other's values.
TEST(PooledResults, AResultBuiltInPooledVectorsHoldsOnlyItsOwnValues) {
  { SqlResult first = a_select_result(); }  // its columns and rows go back to the pool
  std::vector<std::string> columns = argv_pool::take<std::string>(2);
  argv_pool::overwrite(columns[0], "Fstatus");
  argv_pool::overwrite(columns[1], "Fdeadline");
  EXPECT_EQ(columns, (std::vector<std::string>{"Fstatus", "Fdeadline"}));
}

// The same through the real path: the simulated InnoDB builds a SELECT's
// result in the vectors an earlier result of the same shape gave back
// (sim/mysql/engine_statements.cpp), whose strings still hold the earlier
// values. The later result must hold its own names and values only.
TEST(PooledResults, ASelectBuiltInAGivenBackResultHoldsOnlyItsOwnValues) {
  sim::mysql::Engine e;
  const sim::mysql::SessionId s = e.open();
  const std::string insert =
      "INSERT INTO t_tag_lock (Flock_name, Fdesc, Fdeadline) VALUES (?, ?, ?)";
  for (const auto& [name, desc] :
       {std::pair<std::string, std::string>{"a-lock-name-past-fifteen", "a description past 15"},
        {"b", "d"}}) {
    ASSERT_TRUE(e.execute(s, insert, {name, desc, "2026-01-01 00:00:05"}).result.ok());
  }
  {
    const SqlResult first = e.execute(s,
                                      "SELECT Fdesc, Flock_name FROM t_tag_lock WHERE "
                                      "Flock_name = 'a-lock-name-past-fifteen'",
                                      {})
                                .result;
    ASSERT_EQ(first.rows.size(), 1u);
    EXPECT_EQ(first.rows[0][0], "a description past 15");
  }  // two columns and one row go back to the pool
  const SqlResult second =
      e.execute(s, "SELECT Fstatus, Fdesc FROM t_tag_lock WHERE Flock_name = 'b'", {}).result;
  ASSERT_TRUE(second.ok()) << second.message;
  EXPECT_EQ(second.columns, (std::vector<std::string>{"Fstatus", "Fdesc"}));
  ASSERT_EQ(second.rows.size(), 1u);
  EXPECT_EQ(second.rows[0], (SqlRow{std::string("1"), std::string("d")}));  // Fstatus defaults to 1
}

}  // namespace
}  // namespace locksim
