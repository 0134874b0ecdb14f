// set-nx-lua-fenced: set-nx-lua with a fencing token, as Kleppmann's "How to
// do distributed locking" (2016) asks of any lock that guards storage: every
// grant comes with a number larger than any before it, and the storage
// rejects a write carrying a number lower than one it has seen.
//
// Source: M. Kleppmann, "How to do distributed locking" (fencing tokens);
// the lock itself is the Redis documentation's single-instance lock
// (set_nx_lua.h). The counter lives in the *same* Redis, incremented inside
// the acquire script, so key and counter are written atomically — and share
// their fate: a failover to a replica that missed the grant loses both, and
// the next grant can repeat a token already handed out (REFERENCE-VERDICTS:
// "V if the token counter itself is lost").
//
// Steps:
//   1. token := a value unique to this acquire (client name + 64 random bits).
//   2. EVAL the acquire script on KEYS = {resource, resource:fence,
//      resource:fence:holder}, ARGV = {token, ttl_ms}:
//        local cur = redis.call('get', KEYS[1])
//        if cur == ARGV[1] then return tonumber(redis.call('get', KEYS[3])) end
//        if cur then return nil end
//        local f = redis.call('incr', KEYS[2])
//        redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
//        redis.call('set', KEYS[3], f, 'PX', ARGV[2])
//        return f
//      An integer is our fencing token: we hold the lock for at most ttl. The
//      first line makes a retry after a lost reply idempotent (our earlier
//      attempt landed: same grant, same token). Nil: held by another; back
//      off and retry, up to max-attempts.
//   3. Release with set-nx-lua's compare-and-delete script on KEYS[1].
#pragma once

#include <string>

#include "algorithms/algorithm_spec.h"
#include "algorithms/lock_algorithm.h"
#include "algorithms/retry_policy.h"

namespace locksim::algorithms {

class SetNxLuaFenced : public LockAlgorithm {
 public:
  struct Params {
    Duration ttl = Duration::seconds(10);
    RetryPolicy retry = {20, Duration::millis(50), Duration::millis(150)};
  };

  static constexpr const char* kName = "set-nx-lua-fenced";

  static constexpr const char* kAcquireScript =
      "local cur = redis.call('get', KEYS[1]) "
      "if cur == ARGV[1] then return tonumber(redis.call('get', KEYS[3])) end "
      "if cur then return nil end "
      "local f = redis.call('incr', KEYS[2]) "
      "redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) "
      "redis.call('set', KEYS[3], f, 'PX', ARGV[2]) "
      "return f";

  explicit SetNxLuaFenced(Params params);

  AcquireResult acquire(Env& env, const std::string& resource) override;
  ReleaseResult release(Env& env, const Lease& lease) override;
  std::string name() const override { return kName; }

 private:
  Params params_;
};

// Its registry entry: parameters ttl, max-attempts, retry.
const AlgorithmSpec& set_nx_lua_fenced_spec();

}  // namespace locksim::algorithms
