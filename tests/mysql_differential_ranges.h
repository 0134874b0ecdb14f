// Differential scripts for ranges in WHERE (issue 26 item 5), run by
// tests/mysql_differential_test.cpp against real MariaDB and the simulation.
//
// The rule (REPEATABLE READ): a locking read, UPDATE or DELETE over a range
// takes a next-key lock (the record and the gap before it) on every index
// record it scans, from the first one in the range up to and including the
// first one past it, and on the primary-key record of each; a scan that runs
// off the end locks the gap before the supremum. A condition no index serves
// scans, and so locks, every row of the table, matching or not. Each probe
// that waits is ended by the 1 s innodb_lock_wait_timeout (1205).
#pragma once

#include <vector>

#include "mysql_differential_sessions.h"

namespace locksim::difftest {

inline const char* kRangeInsert = "INSERT INTO t_tag_lock (Flock_name, Fdeadline) VALUES (?, ?)";
inline const char* kRangeForUpdate =
    "SELECT Flock_name, Fcount FROM t_tag_lock WHERE Flock_name = ? FOR UPDATE";
inline const Duration kPastLockWait = Duration::millis(1500);

// Rows r-a, r-c, r-e, r-g with deadlines 10, 20, 30, 40 s past midnight.
inline std::vector<Step> range_rows(int session) {
  return {sql(session, kRangeInsert, {"r-a", "2026-01-01 00:00:10"}),
          sql(session, kRangeInsert, {"r-c", "2026-01-01 00:00:20"}),
          sql(session, kRangeInsert, {"r-e", "2026-01-01 00:00:30"}),
          sql(session, kRangeInsert, {"r-g", "2026-01-01 00:00:40"})};
}

inline std::vector<Step> with_rows(std::vector<Step> steps) {
  std::vector<Step> all = range_rows(1);
  all.insert(all.end(), steps.begin(), steps.end());
  return all;
}

// `<` on the unique key: r-a is in the range, r-c is the first record past
// it. Both are locked with their gaps: an insert below r-a waits, so does
// one between r-a and r-c, and r-c itself; an insert past r-c goes ahead.
inline std::vector<Step> range_less_than_on_unique_key() {
  return with_rows({sql(1, "BEGIN"),
                    sql(1,
                        "SELECT Flock_name, Fcount FROM t_tag_lock WHERE Flock_name < ? "
                        "FOR UPDATE",
                        {"r-c"}),
                    sql(2, kRangeInsert, {"r-d", "2026-01-01 00:00:00"}),
                    sql(2, kRangeInsert, {"r-0", "2026-01-01 00:00:00"}), wait(kPastLockWait),
                    sql(2, kRangeForUpdate, {"r-c"}), wait(kPastLockWait),
                    sql(2, kRangeInsert, {"r-b", "2026-01-01 00:00:00"}), sql(1, "COMMIT"),
                    sql(2, "SELECT Flock_name FROM t_tag_lock WHERE Flock_name <= ?", {"r-c"})});
}

// BETWEEN under a shared lock, then `>` running off the end of the index:
// BETWEEN 'r-b' AND 'r-d' reads r-c and locks r-e too (shared: another
// shared lock on it goes ahead, an exclusive one waits); `>` 'r-d' updates
// r-e, r-f (inserted meanwhile) and r-g and locks the gap before the
// supremum, so an insert of a name past every other waits for the commit.
// The last read is on an unindexed column, so both servers scan the primary
// key: a plain SELECT of Flock_name >= 'r-e' (4 rows of 6) was a full scan
// on MariaDB, whose optimizer chooses by cost where the simulation always
// takes the unique index (docs/explanation/mysql.md).
inline std::vector<Step> range_between_and_past_the_end() {
  const char* between =
      "SELECT Flock_name, Fcount FROM t_tag_lock WHERE Flock_name BETWEEN ? AND ? "
      "LOCK IN SHARE MODE";
  const char* share =
      "SELECT Flock_name, Fcount FROM t_tag_lock WHERE Flock_name = ? LOCK IN SHARE MODE";
  return with_rows(
      {sql(1, "BEGIN"), sql(1, between, {"r-b", "r-d"}), sql(2, share, {"r-e"}),
       sql(2, kRangeForUpdate, {"r-e"}), wait(kPastLockWait),
       sql(2, kRangeInsert, {"r-f", "2026-01-01 00:00:00"}), sql(1, "COMMIT"), sql(1, "BEGIN"),
       sql(1, "UPDATE t_tag_lock SET Fcount = Fcount + 1 WHERE Flock_name > ?", {"r-d"}),
       sql(2, kRangeInsert, {"r-z", "2026-01-01 00:00:00"}), sql(1, "COMMIT"),
       sql(2, "SELECT Flock_name, Fcount FROM t_tag_lock WHERE Fcount >= ?", {"1"})});
}

// A condition on an unindexed column (Fdeadline) scans the whole primary
// key and locks every row and the gap at its end, matching or not; a range
// on the primary key locks from its first row to the first one past it
// (here: off the end, so inserts wait), and no row below it.
inline std::vector<Step> range_unindexed_and_primary_key() {
  return with_rows(
      {sql(1, "BEGIN"),
       sql(1, "UPDATE t_tag_lock SET Fcount = Fcount + 1 WHERE Fdeadline < ?",
           {"2026-01-01 00:00:25"}),
       sql(2, kRangeForUpdate, {"r-g"}), wait(kPastLockWait),
       sql(2, kRangeInsert, {"r-z", "2026-01-01 00:00:00"}), wait(kPastLockWait), sql(1, "COMMIT"),
       sql(1, "BEGIN"),
       sql(1, "SELECT Flock_name, Fcount FROM t_tag_lock WHERE Findex >= ? FOR UPDATE", {"3"}),
       sql(2, kRangeForUpdate, {"r-c"}), sql(2, kRangeInsert, {"r-y", "2026-01-01 00:00:00"}),
       sql(1, "DELETE FROM t_tag_lock WHERE Findex > ? AND Fdeadline >= ?",
           {"3", "2026-01-01 00:00:40"}),
       sql(1, "COMMIT"),
       sql(2, "SELECT Flock_name, Fcount FROM t_tag_lock WHERE Fcount <= ? AND Fdeadline > ?",
           {"1", "2026-01-01 00:00:05"})});
}

// The steal of lock tables in the wild: UPDATE ... WHERE name = ? AND
// deadline < ?. Two sessions race to steal an expired row: the first takes
// it, the second waits for its row lock, then reads the new deadline and
// matches nothing: exactly one winner. A `<=` as well as `<`.
inline std::vector<Step> range_steal_expired_row() {
  const char* steal =
      "UPDATE t_tag_lock SET Fdesc = ?, Fdeadline = ? WHERE Flock_name = ? AND Fdeadline < ?";
  const char* steal_le =
      "UPDATE t_tag_lock SET Fdesc = ?, Fdeadline = ? WHERE Flock_name = ? AND Fdeadline <= ?";
  return {sql(1, kRangeInsert, {"steal", "2026-01-01 00:00:10"}),
          sql(1, "BEGIN"),
          sql(2, "BEGIN"),
          sql(1, steal, {"s1", "2026-01-01 00:01:00", "steal", "2026-01-01 00:00:30"}),
          sql(2, steal, {"s2", "2026-01-01 00:01:00", "steal", "2026-01-01 00:00:30"}),
          sql(1, "COMMIT"),
          sql(2, "COMMIT"),
          sql(2, steal_le, {"s2", "2026-01-01 00:02:00", "steal", "2026-01-01 00:00:59"}),
          sql(2, steal_le, {"s2", "2026-01-01 00:02:00", "steal", "2026-01-01 00:01:00"}),
          sql(1, "SELECT Fdesc, Fdeadline FROM t_tag_lock WHERE Flock_name = ?", {"steal"})};
}

}  // namespace locksim::difftest
