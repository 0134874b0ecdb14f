// mysql-v1, mysql-center, mysql-segmented: the MySQL lock table of a widely
// read 2018 article on Redis/MySQL distributed locks. Its author replaced a
// Redis lock after a Redis inventory counter "gave out 14 prizes where there
// were 10", put the lock in a MySQL table (t_tag_lock, see
// sim/mysql/schema.h) and iterated three versions:
//
// v1 (mysql-v1), one transaction per attempt:
//   1. BEGIN; SELECT ... FROM t_tag_lock WHERE Flock_name=? FOR UPDATE
//   2. row present: if Fstatus=1 AND Fdeadline > now, the lock is held:
//      ROLLBACK and retry; else UPDATE it (deadline, status, owner, Fcount+1).
//      row missing: INSERT it (held, deadline, owner, Fcount=1).
//   3. COMMIT.
//   The article reports "a serious deadlock problem": two sessions that both
//   find the row missing both hold a gap lock, both INSERT, and InnoDB kills
//   one of them (1213). Here that attempt simply fails and is retried.
// v2 (mysql-center): every acquire first serialises on one center row:
//   1. BEGIN; SELECT ... WHERE Flock_name='center_lock' FOR UPDATE (inserting
//      the center row when it is missing).
//   2. Read the lock's row (a plain, snapshot SELECT: its snapshot starts
//      after the center lock is ours, so it sees every committed acquire);
//      INSERT it (free) when missing.
//   3. Fstatus=1 AND Fdeadline > now: held, ROLLBACK and retry. Else UPDATE
//      Fdeadline = now + expire, Fstatus=1, Fdesc=<our token>, Fcount+1.
//   4. COMMIT.
// v3 (mysql-segmented): as v2 with 100 center rows center_lock_00..99, the
//   one chosen by the last two decimal digits of zlib's CRC32 of the name.
//
// `now` is the client's clock (the article's `new Date()`), read once the
// center lock is held, and the deadline is a DATETIME: whole seconds, the
// fraction truncated by MariaDB. The article's expiry is 31,536,000 s (a
// year), kept as the default `ttl`, so a crashed holder keeps the lock a
// year; ttl below 1 s is refused (the column cannot hold it).
//
// The article does not show its release. Three are provided (parameter
// `release`): checked (default) — UPDATE ... SET Fstatus=0 WHERE Flock_name=?
// AND Fdesc=<our token> —, blind, without the owner check, and delete —
// DELETE ... WHERE Flock_name=? AND Fdesc=<our token>, the insert-to-lock,
// delete-to-unlock table many codebases use. With delete every acquire after
// a release finds the row missing, so v1's gap-lock race (and its deadlocks)
// comes back at every hand-over, and Fcount restarts at 1: the fencing token
// is then not monotonic.
//
// Fcount is incremented by every successful acquire and returned as the
// lease's fencing token.
//
// Parameter `acquire`: `read` (default) is the article's: read the row under
// the lock, judge its deadline on the client, then UPDATE. `steal` is how lock
// tables in the wild take a row (ShedLock's, for one): a single conditional
//   UPDATE ... SET Fdeadline = now + expire, Fstatus = 1, Fdesc = <token>,
//          Fcount = Fcount + 1 WHERE Flock_name = ? AND Fdeadline < now
// in a transaction (v2/v3: after the center lock), one affected row meaning
// ours (then Fcount is read back for the fence); none means held or missing,
// and a missing row is INSERTed (v1: after ending the transaction, in
// autocommit, as ShedLock does; 1062: someone else was faster). InnoDB's
// row lock makes a race of stealers have one winner: the others wait for it
// and then see its new deadline. Its release writes Fdeadline = now, so the
// row can be stolen at once.
//
// What it does not protect against (and locksim shows): a client clock ahead
// by more than ttl - hold (it sees a live deadline as past), a holder pausing
// past its deadline, and everything a single database loses (failover to a
// replica without the commit, a crash with innodb_flush_log_at_trx_commit=0).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "algorithms/algorithm_spec.h"
#include "algorithms/lock_algorithm.h"
#include "algorithms/retry_policy.h"

namespace locksim::algorithms {

class MysqlLock : public LockAlgorithm {
 public:
  enum class Version { kV1, kCenter, kSegmented };
  enum class Release { kChecked, kBlind, kDelete };
  enum class Take { kRead, kSteal };

  struct Params {
    Version version = Version::kCenter;
    Duration ttl = Duration::seconds(31'536'000);  // the article's expire: a year
    Release release = Release::kChecked;
    Take take = Take::kRead;
    RetryPolicy retry = {20, Duration::millis(50), Duration::millis(150)};
  };

  explicit MysqlLock(Params params);

  AcquireResult acquire(Env& env, const std::string& resource) override;
  ReleaseResult release(Env& env, const Lease& lease) override;
  std::string name() const override;

  // The center row guarding `resource`: "center_lock" for v2,
  // "center_lock_NN" with NN = CRC32(resource) mod 100 for v3.
  std::string center_row(const std::string& resource) const;

 private:
  // One attempt's outcome.
  struct Attempt {
    Outcome outcome = Outcome::kFail;
    std::string detail;
    uint64_t fence = 0;
    TimePoint deadline;  // the stored (truncated) deadline, on the client's clock scale
  };
  Attempt attempt_v1(SqlConnection& sql, Env& env, const std::string& resource,
                     const std::string& token, bool maybe_ours);
  Attempt attempt_center(SqlConnection& sql, Env& env, const std::string& resource,
                         const std::string& token, bool maybe_ours);
  // acquire=steal: the conditional UPDATE, then the INSERT of a missing row.
  Attempt attempt_steal(SqlConnection& sql, Env& env, const std::string& resource,
                        const std::string& token, bool maybe_ours);
  // After a steal that matched nothing: a lost COMMIT of ours may have
  // landed (the row names our token), else the row is missing (INSERT it)
  // or held by someone else.
  Attempt steal_missed(SqlConnection& sql, Env& env, const std::string& resource,
                       const std::string& token, bool maybe_ours);
  // v2/v3: takes the center row FOR UPDATE inside the open transaction,
  // inserting it on first use. Returns the failed attempt, or nullopt.
  std::optional<Attempt> lock_center(SqlConnection& sql, const std::string& resource);
  // The lock row, read under the (center) lock: take it if free or expired.
  Attempt judge_row(SqlConnection& sql, Env& env, const std::string& resource,
                    const std::string& token, bool maybe_ours, const SqlRow& row);
  // UPDATE the row to ours (count: its Fcount before), then COMMIT.
  Attempt take(SqlConnection& sql, Env& env, const std::string& resource, const std::string& token,
               uint64_t count);
  Attempt commit(SqlConnection& sql, uint64_t fence, TimePoint deadline);

  Params params_;
};

// The registry entries: parameters ttl, release, acquire, max-attempts, retry.
const AlgorithmSpec& mysql_v1_spec();
const AlgorithmSpec& mysql_center_spec();
const AlgorithmSpec& mysql_segmented_spec();

}  // namespace locksim::algorithms
