// naive-setnx: the lock most first attempts at a Redis lock look like, and
// the one the Redis SETNX documentation page ("Design pattern: Locking with
// SETNX") starts from before it explains why it is not enough.
//
// Steps:
//   1. token := a value unique to this acquire (client name + 64 random bits).
//   2. SETNX key token. 1 means we hold the lock; 0 means someone else does:
//      wait a random backoff and retry, up to max_attempts.
//   3. EXPIRE key ttl_s, a second round trip, so a holder that dies does not
//      keep the lock forever. EXPIRE takes whole seconds: the TTL is rounded
//      up, and never below 1 s. The reply is not checked — the client already
//      holds the lock after step 2, whatever step 3 does.
//   4. Release with a plain DEL key: no check that the key is still ours.
//
// What it does not protect against (and locksim shows):
//   - A crash (or a lost EXPIRE) between steps 2 and 3 leaves a key without
//     expiry: the lock is stuck forever. The `expire_delay` parameter widens
//     that window so scenarios can hit it.
//   - The holder pausing past its TTL: its late DEL removes the *next*
//     holder's key and lets a third client in beside the second.
//   - The server's clock jumping forward, a failover to a replica that never
//     saw the key, a restart without fsync, a partition or long delay.
//   See ../shared/REFERENCE-VERDICTS.md.
#pragma once

#include <string>

#include "algorithms/algorithm_spec.h"
#include "algorithms/lock_algorithm.h"
#include "algorithms/retry_policy.h"

namespace locksim::algorithms {

class NaiveSetnx : public LockAlgorithm {
 public:
  struct Params {
    Duration ttl = Duration::seconds(10);  // rounded up to whole seconds for EXPIRE
    RetryPolicy retry = {20, Duration::millis(50), Duration::millis(150)};  // SETNX attempts
    Duration expire_delay = Duration::zero();  // sleep between SETNX and EXPIRE
    size_t server = 0;                         // which Env redis connection
  };

  static constexpr const char* kName = "naive-setnx";

  explicit NaiveSetnx(Params params);

  AcquireResult acquire(Env& env, const std::string& resource) override;
  ReleaseResult release(Env& env, const Lease& lease) override;
  std::string name() const override { return kName; }

  const Params& params() const { return params_; }

  // The EXPIRE argument for `ttl`: whole seconds, rounded up, at least 1.
  static int64_t expire_seconds(Duration ttl);

 private:
  Params params_;
};

// Its registry entry: parameters ttl, max-attempts, retry, expire-delay.
const AlgorithmSpec& naive_setnx_spec();

}  // namespace locksim::algorithms
