// redisson-fair: Redisson's RedissonFairLock (org.redisson.RedissonFairLock),
// RLock with a queue, so waiters are granted the lock in the order they
// asked for it. Written from the steps below (Redisson's documentation and
// the behaviour its tracker reports), not from its code.
//
// Steps:
//   1. Beside the lock's hash (RLock's: one field, the holder's id, valued
//      with a re-entrancy count) live a queue of waiters (a list,
//      "redisson_lock_queue:{lock}") and each waiter's timeout (a sorted set,
//      "redisson_lock_timeout:{lock}", scored in unix ms). The timeout is
//      written from *the waiter's own wall clock*, and every script compares
//      it with the clock of whichever client runs it: Redis itself never
//      reads the time here.
//   2. Acquire is one Lua script, given the lease, our field, the thread wait
//      time (`wait-time`, 5 minutes: Redisson's current default) and the
//      client's wall clock now in ms:
//        a. purge: while the queue's head has a timeout <= now, drop it from
//           queue and set (a live waiter too, if the caller's clock is ahead);
//        b. if the hash does not exist and the queue is empty or we are its
//           head: leave queue and set, shift every remaining waiter's timeout
//           down by the wait time, HSET our field 1, PEXPIRE the lease, nil;
//        c. our field present (re-entry): HINCRBY, PEXPIRE, nil;
//        d. already queued: answer our remaining wait, timeout - wait - now;
//        e. else join the tail: ttl = the last waiter's timeout - now if
//           there is one, else the hash's PTTL; our timeout = ttl + wait +
//           now; ZADD and RPUSH; answer ttl.
//      So each waiter's timeout is the one ahead of it plus the wait time,
//      and the head's is its clock at joining + the holder's PTTL + the wait
//      time.
//   3. A waiter that got a number waits (here: polls every 50-150 ms, cut
//      to a positive answer, as `redisson` did before its waiters slept on
//      the unlock message; Redisson's fair waiter sleeps on its own channel)
//      and tries again. One that
//      gives up (max-attempts spent) runs the cancel script: shift the
//      timeout of every waiter behind it down by the wait time, and leave
//      queue and set (retried as the release is). A waiter that crashes, or
//      whose cancel never gets through, stays queued until someone's clock
//      passes its timeout.
//   4. The watchdog is RLock's (redisson_lock.h, step 3): watchdog-timeout
//      (30 s), renewed every third of it by a task of the client's process.
//   5. Release is one Lua script: an unlock latch answers a retried release
//      (RLock's step 4); then purge as in 2a; if the hash is gone, PUBLISH
//      an unlock message to the queue's head (its own channel,
//      "redisson_lock__channel:{lock}:<field>") and answer 1 — so a holder
//      whose lease ran out is told nothing even at release, when nobody took
//      the lock meanwhile; if our field is absent, nil ("not locked by
//      current thread"); else HINCRBY -1, above zero PEXPIRE and answer 0, at
//      zero DEL, PUBLISH to the head and answer 1. The answer is SET under
//      the latch key. Retried as RLock's release is.
//
// What a skewed client clock does: a clock ahead by more than the head's
// remaining wait purges live waiters (2a) and can take the lock out of
// turn; a waiter whose clock is ahead writes a timeout that far too late, so
// if it dies queued its entry stays at the head and nobody can take the
// lock until every clock passes it (wait time + its clock's lead).
//
// Simplified, beyond RLock's (one field per acquire), and besides polling
// instead of the unlock message (step 3): Redisson's lock() waits without bound;
// here an acquire gives up after max-attempts and cancels, so a waiter that
// gives up rejoins at the tail on its next acquire.
#pragma once

#include <string>

#include "algorithms/algorithm_spec.h"
#include "algorithms/lock_algorithm.h"
#include "algorithms/retry_policy.h"

namespace locksim::algorithms {

class RedissonFairLock : public LockAlgorithm {
 public:
  struct Params {
    Duration watchdog_timeout = Duration::seconds(30);  // lockWatchdogTimeout
    Duration wait_time = Duration::seconds(300);        // threadWaitTime
    // 60 polls of 50-150 ms, about 6 s: long enough to keep a place behind
    // two or three 1-3 s holds, short enough that a stalled queue shows up as
    // failed acquires within a sweep's 10 s stuck_after.
    RetryPolicy retry = {60, Duration::millis(50), Duration::millis(150)};
    int release_attempts = 4;                         // 1 + Redisson's retryAttempts (3)
    Duration release_retry = Duration::millis(1500);  // Redisson's retryInterval
    size_t server = 0;                                // which Env redis connection
  };

  static constexpr const char* kName = "redisson-fair";

  // The scripts (each built once; 2a's purge opens both acquire and release).
  // Step 2. KEYS[1] lock, KEYS[2] queue, KEYS[3] timeouts; ARGV[1] lease ms,
  // ARGV[2] our field, ARGV[3] wait time ms, ARGV[4] now ms.
  static const std::string& acquire_script();
  // Step 3's cancel. KEYS[1] queue, KEYS[2] timeouts; ARGV[1] our field,
  // ARGV[2] wait time ms. Answers how many entries it removed (LREM's count).
  static const std::string& cancel_script();
  // Step 5. KEYS[1] lock, KEYS[2] queue, KEYS[3] timeouts, KEYS[4] channel
  // (the head's is it + ":" + its field), KEYS[5] latch; ARGV[1] unlock
  // message, ARGV[2] lease ms, ARGV[3] our field, ARGV[4] now ms, ARGV[5]
  // latch expiry ms.
  static const std::string& release_script();

  explicit RedissonFairLock(Params params);

  AcquireResult acquire(Env& env, const std::string& resource) override;
  ReleaseResult release(Env& env, const Lease& lease) override;
  std::string name() const override { return kName; }
  const Params& params() const { return params_; }

  // RLock's shape: the hash at `resource`, its field naming the holder. The
  // exposure probe asks whether that hash is gone or expired. For this lock
  // a fresh contender also needs the queue empty or to be its head, which
  // the probe cannot express: its "free" means free for the queue's head,
  // which may be a dead entry (steps above). The queue and the timeouts are
  // named too, so `locksim explain` can tell such an entry.
  StoreShape store_shape(const std::string& resource, size_t redis_servers) const override {
    (void)redis_servers;
    StoreShape shape{resource, 1, false, true};
    shape.queue_key = queue_key(resource);
    shape.queue_timeouts_key = timeout_key(resource);
    return shape;
  }

  // The queue and the timeout set, as Redisson names them.
  static std::string queue_key(const std::string& resource);
  static std::string timeout_key(const std::string& resource);

 private:
  // Step 3's cancel, after the last attempt, retried as the release is. If
  // every try goes unanswered the entry may stay until its timeout.
  void cancel(Env& env, const std::string& resource, const std::string& field) const;

  Params params_;
};

// Its registry entry: watchdog-timeout, wait-time, max-attempts, retry.
const AlgorithmSpec& redisson_fair_spec();

}  // namespace locksim::algorithms
