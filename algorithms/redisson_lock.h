// redisson, redisson-leased and redisson-fenced: Redisson's RLock
// (org.redisson.RedissonLock), the lock most Java teams take on Redis, with
// and without its watchdog, and RFencedLock (since Redisson 3.19), the same
// lock handing out a fencing token.
// Written from the steps below (Redisson's documentation and the behaviour
// its tracker reports), not from its code.
//
// Steps:
//   1. The lock is a Redis hash named after the lock. Its one field is the
//      holder's id, its value a re-entrancy count. Acquire is one Lua script,
//      never retried by the client:
//        if the hash does not exist, or has our field:
//          HINCRBY our field by 1, PEXPIRE the hash to the lease; return nil
//        else return PTTL of the hash
//   2. A waiter refused for the first time subscribes to the lock's channel
//      (its client's pub/sub connection, Env::redis_subscriber) and tries
//      again at once; refused again with a PTTL, it waits for an unlock
//      message or for the PTTL, whichever comes first, then tries again.
//      When the acquire returns it unsubscribes. The message is the only way
//      to learn of a release early: one lost (the subscriber's connection
//      dropped, a failover) costs the waiter up to the holder's remaining
//      lease. A refusal without a PTTL (an error, no reply) waits a retry
//      pause drawn from `retry` instead.
//   3. redisson-leased: the lease is the caller's (parameter `ttl`, as the
//      other Redis locks name theirs); nothing renews it.
//      redisson: no lease given, so the lease is `watchdog-timeout` (30 s)
//      and a timer of the client's *process* (the watchdog) renews it every
//      watchdog-timeout / 3: if the hash still has our field, PEXPIRE it to
//      watchdog-timeout. A renewal without an answer (timeout, lost
//      connection) is logged and tried again at the next period. A renewal
//      that finds our field gone stops renewing, silently: the holder is
//      never told it lost the lock. The timer pauses and dies with the
//      process (a GC pause stops it too), so a pause breaks the lock once it
//      outlasts watchdog-timeout minus the time since the last renewal; a
//      holder whose work hangs while its process runs keeps the lock.
//   3b. redisson-fenced: the acquire script also INCRs a token key beside the
//      lock ("redisson_lock_token:{lock}", no expiry, in the same Redis) and
//      answers {-1, token}; refused, {PTTL, -1}. The token is the lease's
//      fence. Key and counter share their fate: after a failover to a replica
//      that missed the grant, or a restart without fsync, a token repeats.
//   4. Release is one Lua script: if an unlock latch for this request exists
//      (a retry of a release whose reply was lost), return its outcome.
//      If our field is absent: nil ("not locked by current thread"). Else
//      HINCRBY it by -1; above zero, PEXPIRE and answer 0; at zero, DEL the
//      hash, PUBLISH an unlock message on the lock's channel and answer 1.
//      Either answer is also SET under the latch key with a short expiry.
//      The client retries a release that got no reply (Redisson's
//      retryAttempts, 3, retryInterval 1.5 s) with the same request id, so
//      the latch answers the retry. Release stops the watchdog whatever the
//      outcome.
//
// Simplified: locksim's clients hold one lock and never re-enter, so the
// field is unique per acquire (Redisson's is per thread). Each client is a
// process of its own, so an unlock message wakes every waiting client (in
// Redisson it wakes one waiting thread per process); all but one find the
// lock taken again and wait anew.
//
// Replicas: when the client's configuration lists replicas behind the
// master (RedisConnection::replicas(), Sentinel's list), a grant and a
// renewal are followed by WAIT n 1000 for the n replicas listed (Redisson's
// evalWriteSyncedAsync, "WAIT 1 1000" with one replica). A grant no replica
// acknowledged within the second is undone with the release script and the
// call fails (handleNoSync); a WAIT without a reply fails the call as any
// lost reply does, and the grant stays until its lease runs out. A renewal no
// replica acknowledged is logged and tried again next period. One
// acknowledgement is enough: with two replicas, promoting the one that did
// not acknowledge still loses the lock. Simplified: Redisson retries a
// no-ack lock write (retryAttempts) before undoing it; here the first undoes
// it (docs/explanation/redisson.md).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/algorithm_spec.h"
#include "algorithms/lock_algorithm.h"
#include "algorithms/param_reader.h"
#include "algorithms/retry_policy.h"

namespace locksim::algorithms {

class RedissonLock : public LockAlgorithm {
 public:
  struct Params {
    // Zero: the watchdog renews a lease of `watchdog_timeout` (lock());
    // positive: a fixed lease nothing renews (lock(leaseTime)).
    Duration lease = Duration::zero();
    Duration watchdog_timeout = Duration::seconds(30);  // lockWatchdogTimeout
    RetryPolicy retry = {20, Duration::millis(50), Duration::millis(150)};
    int release_attempts = 4;                         // 1 + Redisson's retryAttempts (3)
    Duration release_retry = Duration::millis(1500);  // Redisson's retryInterval
    size_t server = 0;                                // which Env redis connection
    bool fenced = false;                              // RFencedLock: a token with each grant
  };

  static constexpr const char* kName = "redisson";
  static constexpr const char* kLeasedName = "redisson-leased";
  static constexpr const char* kFencedName = "redisson-fenced";

  // Step 1. KEYS[1] lock; ARGV[1] lease ms, ARGV[2] our field.
  static constexpr const char* kAcquireScript =
      "if redis.call('exists', KEYS[1]) == 0 or "
      "redis.call('hexists', KEYS[1], ARGV[2]) == 1 then "
      "redis.call('hincrby', KEYS[1], ARGV[2], 1); "
      "redis.call('pexpire', KEYS[1], ARGV[1]); "
      "return nil; end; "
      "return redis.call('pttl', KEYS[1]);";
  // Step 3b. KEYS[1] lock, KEYS[2] token; ARGV as kAcquireScript.
  static constexpr const char* kFencedAcquireScript =
      "if redis.call('exists', KEYS[1]) == 0 or "
      "redis.call('hexists', KEYS[1], ARGV[2]) == 1 then "
      "local token = redis.call('incr', KEYS[2]); "
      "redis.call('hincrby', KEYS[1], ARGV[2], 1); "
      "redis.call('pexpire', KEYS[1], ARGV[1]); "
      "return {-1, token}; end; "
      "return {redis.call('pttl', KEYS[1]), -1};";
  // Step 3's renewal. KEYS[1] lock; ARGV[1] lease ms, ARGV[2] our field.
  static constexpr const char* kRenewScript =
      "if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then "
      "redis.call('pexpire', KEYS[1], ARGV[1]); return 1; end; "
      "return 0;";
  // Step 4. KEYS[1] lock, KEYS[2] channel, KEYS[3] latch; ARGV[1] unlock
  // message, ARGV[2] lease ms, ARGV[3] our field, ARGV[4] latch expiry ms.
  static constexpr const char* kReleaseScript =
      "local done = redis.call('get', KEYS[3]); "
      "if done ~= false then return tonumber(done); end; "
      "if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then return nil; end; "
      "local count = redis.call('hincrby', KEYS[1], ARGV[3], -1); "
      "local outcome = 0; "
      "if count > 0 then redis.call('pexpire', KEYS[1], ARGV[2]); "
      "else redis.call('del', KEYS[1]); "
      "redis.call('publish', KEYS[2], ARGV[1]); outcome = 1; end; "
      "redis.call('set', KEYS[3], outcome, 'px', ARGV[4]); "
      "return outcome;";

  explicit RedissonLock(Params params);

  AcquireResult acquire(Env& env, const std::string& resource) override;
  ReleaseResult release(Env& env, const Lease& lease) override;
  std::string name() const override {
    return params_.fenced ? kFencedName : watchdog() ? kName : kLeasedName;
  }

  bool watchdog() const { return params_.lease == Duration::zero(); }
  const Params& params() const { return params_; }

  // The lock's pub/sub channel and a release's latch key, as Redisson names
  // them ("redisson_lock__channel:{lock}", "redisson_unlock_latch:{lock}:id").
  static std::string channel(const std::string& resource);
  static std::string latch_key(const std::string& resource, const std::string& request);
  // RFencedLock's token counter ("redisson_lock_token:{lock}").
  static std::string token_key(const std::string& resource);

 private:
  // One acquire attempt: nil (granted, *fence set when fenced), or the reply
  // that refused it (an integer PTTL, an error, no reply).
  Reply try_once(RedisConnection& redis, const std::string& resource, const std::string& field,
                 std::optional<uint64_t>* fence) const;
  Duration lease_of_store() const { return watchdog() ? params_.watchdog_timeout : params_.lease; }

  Params params_;
};

// What RedissonLock shares with RedissonFairLock (redisson_fair_lock.h),
// whose watchdog and release retries are RLock's (both extend Redisson's
// RedissonBaseLock).

// Reads the duration parameter `name` as a lease or watchdog timeout: from
// 3 ms (the watchdog renews every third of it, in whole ms) to a day. Throws
// ConfigError naming the field.
Duration bounded_lease(const ParamReader& r, const std::string& name);

// Step 3's watchdog, on a task of `env`'s process: every `timeout` / 3 it
// runs kRenewScript for `field` on `resource` (Redis connection `server` of
// the task's own Env), until the returned handle is stopped or a renewal
// finds the field gone. A stop ends the task's wait for its next renewal at
// once in the simulation (Redisson cancels the renewal's timer at unlock);
// live, at its next wake. Precondition: timeout >= 3 ms. The task copies
// what it needs: it outlives the call and, live, runs on another thread.
std::shared_ptr<LeaseRenewal> start_watchdog(Env& env, size_t server, Duration timeout,
                                             const std::string& resource, const std::string& field);

// What a lock write's WAIT says (see RedissonLock's "Replicas"): the write
// stands (no replicas listed, nothing sent; or one acknowledged), no replica
// acknowledged within kSyncTimeout, or the WAIT got no reply.
enum class WriteSync { kStands, kNoReplicaAcked, kNoReply };
inline constexpr Duration kSyncTimeout = Duration::millis(1000);  // slavesSyncTimeout
WriteSync sync_replicas(RedisConnection& redis);

// What Redisson makes of a grant whose WAIT did not stand: `granted` (an ok
// result, its lease without a watchdog yet) becomes a failed call. No
// replica acknowledged: the grant is undone first with `lock`'s release
// (handleNoSync), and the call fails. No reply: the call's outcome is
// unknown, and the grant stays until its lease runs out. Precondition:
// sync != kStands.
AcquireResult unsynced_grant(Env& env, LockAlgorithm& lock, WriteSync sync, AcquireResult granted);

// Step 4's client side: sends `argv` (a release script) up to `attempts`
// times, `pause` apart, while it gets no reply, and reads the script's
// answer: 1 or 0 ok, nil "not locked by current thread", an error fail, no
// reply unknown. Precondition: attempts >= 1.
ReleaseResult release_with_retries(Env& env, RedisConnection& redis,
                                   const std::vector<std::string>& argv, int attempts,
                                   Duration pause);

// Their registry entries: redisson and redisson-fenced (watchdog-timeout,
// max-attempts, retry) and redisson-leased (ttl, max-attempts, retry).
const AlgorithmSpec& redisson_spec();
const AlgorithmSpec& redisson_leased_spec();
const AlgorithmSpec& redisson_fenced_spec();

}  // namespace locksim::algorithms
