// set-nx-lua: the single-instance Redis lock the Redis documentation
// recommends ("Distributed Locks with Redis", the single-instance section).
//
// Steps:
//   1. token := a value unique to this acquire (client name + 64 random bits).
//   2. SET key token NX PX ttl_ms. "OK" means we hold the lock for at most ttl.
//      A nil reply means someone else holds it: wait a random backoff, retry,
//      up to max_attempts.
//   3. Release with a Lua script that deletes the key only if it still holds
//      our token — "compare and delete" — so a client whose lease expired
//      cannot delete the next holder's lock:
//        if redis.call("get",KEYS[1]) == ARGV[1] then
//          return redis.call("del",KEYS[1]) else return 0 end
//
// What it does not protect against (and locksim shows): the holder pausing
// past its TTL, the master's clock jumping, a failover to a replica that never
// saw the key, a restart without fsync. See ../shared/REFERENCE-VERDICTS.md.
#pragma once

#include <string>
#include <vector>

#include "algorithms/algorithm_spec.h"
#include "algorithms/lock_algorithm.h"
#include "algorithms/retry_policy.h"

namespace locksim::algorithms {

class SetNxLua : public LockAlgorithm {
 public:
  struct Params {
    Duration ttl = Duration::seconds(10);
    RetryPolicy retry = {20, Duration::millis(50), Duration::millis(150)};  // SET attempts
    size_t server = 0;  // which Env redis connection
  };

  static constexpr const char* kName = "set-nx-lua";

  static constexpr const char* kReleaseScript =
      "if redis.call(\"get\",KEYS[1]) == ARGV[1] then "
      "return redis.call(\"del\",KEYS[1]) else return 0 end";

  explicit SetNxLua(Params params);

  AcquireResult acquire(Env& env, const std::string& resource) override;
  ReleaseResult release(Env& env, const Lease& lease) override;
  std::string name() const override { return kName; }

  const Params& params() const { return params_; }

 private:
  Params params_;
};

// Its registry entry: parameters ttl, max-attempts, retry.
const AlgorithmSpec& set_nx_lua_spec();

// A token unique to one acquire: "<client>:<16 hex digits>".
std::string make_token(Env& env);

}  // namespace locksim::algorithms
