// Differential scripts for InnoDB's lock queue (issue 26 item 4), run by
// tests/mysql_differential_test.cpp against real MariaDB and the simulation.
//
// The rule: a waiting lock request is itself in the queue. It blocks later
// conflicting requests, the deadlock detector follows waits-for edges through
// it, and a release grants every waiting request that no longer conflicts
// with anything ahead of it at once.
#pragma once

#include <vector>

#include "mysql_differential_sessions.h"

namespace locksim::difftest {

inline const char* kQueueInsert =
    "INSERT INTO t_tag_lock (Flock_name, Fcount, Fdesc) VALUES (?, ?, ?)";
inline const char* kQueueShare =
    "SELECT Flock_name, Fcount FROM t_tag_lock WHERE Flock_name = ? LOCK IN SHARE MODE";
inline const char* kQueueForUpdate =
    "SELECT Flock_name, Fcount FROM t_tag_lock WHERE Flock_name = ? FOR UPDATE";

// Two sessions wait (S, for the duplicate check) on a row a third inserted
// and has not committed. Its rollback removes the row; both waiters' requests
// are granted at once and, as the record is gone, live on as locks on the gap
// it left. Each then inserts into that gap and waits for the other's gap lock:
// one gets 1213, the other inserts. Without the queue the second waiter would
// wait for the first one's insert and get 1062 when it commits. Which of two
// equally heavy waiters MariaDB kills depends on which thread runs first (both
// were seen), so s3 writes a row first: the lighter s2 is the victim.
inline std::vector<Step> queue_duplicate_waiters_deadlock() {
  return {sql(1, "BEGIN"),
          sql(1, kQueueInsert, {"q-dup", "0", "s1"}),
          sql(2, "BEGIN"),
          sql(2, kQueueInsert, {"q-dup", "0", "s2"}),
          sql(3, "BEGIN"),
          sql(3, kQueueInsert, {"q-heavy", "0", "s3"}),
          sql(3, kQueueInsert, {"q-dup", "0", "s3"}),
          sql(1, "ROLLBACK"),
          sql(2, "COMMIT"),
          sql(3, "COMMIT"),
          sql(1, "SELECT Flock_name, Fdesc FROM t_tag_lock WHERE Flock_name = 'q-dup'")};
}

// A shared-lock holder asks for the exclusive lock while another session's
// request for it waits: the new request queues behind the waiting one, which
// waits for the holder: a deadlock. The waiter is the lighter transaction and
// dies; the holder gets its exclusive lock.
inline std::vector<Step> queue_shared_holder_upgrade_deadlock() {
  return {sql(1, kQueueInsert, {"q-up", "0", ""}),
          sql(1, "BEGIN"),
          sql(1, kQueueShare, {"q-up"}),
          sql(2, "BEGIN"),
          sql(2, kQueueForUpdate, {"q-up"}),
          sql(1, kQueueForUpdate, {"q-up"}),
          sql(1, "UPDATE t_tag_lock SET Fcount = Fcount + 1 WHERE Flock_name = ?", {"q-up"}),
          sql(1, "COMMIT"),
          sql(2, "COMMIT"),
          sql(2, kQueueShare, {"q-up"})};
}

// A waiting exclusive request blocks a later shared one, although the shared
// request is compatible with the lock actually held: s3 waits behind s2 and
// gets the row only after s2 committed its change.
inline std::vector<Step> queue_waiting_request_blocks_later() {
  return {sql(1, kQueueInsert, {"q-wait", "0", ""}),
          sql(1, "BEGIN"),
          sql(1, kQueueShare, {"q-wait"}),
          sql(2, "BEGIN"),
          sql(2, kQueueForUpdate, {"q-wait"}),
          sql(3, "BEGIN"),
          sql(3, kQueueShare, {"q-wait"}),
          sql(1, "COMMIT"),
          sql(2, "UPDATE t_tag_lock SET Fcount = Fcount + 1 WHERE Flock_name = ?", {"q-wait"}),
          sql(2, "COMMIT"),
          sql(3, "COMMIT")};
}

}  // namespace locksim::difftest
