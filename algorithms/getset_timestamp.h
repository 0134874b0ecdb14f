// getset-timestamp: the lock the old Redis SETNX documentation taught
// ("Handling deadlocks"), copied into many client libraries before SET gained
// NX and PX. The key never expires on the server; its value is the moment the
// lock expires, read from the *client's* clock, and a contender that finds an
// expired value takes the lock over with GETSET.
//
// Steps (numbered as in the documentation):
//   1. expires_at := client now in ms + ttl_ms + 1. SETNX key expires_at.
//      1 means we hold the lock until expires_at.
//   2. 0 means the key exists. GET key. (A nil reply here means the holder
//      released in between: go back to step 1 at once, at most 10 times.)
//   3. If the stored timestamp is later than our clock's now, the lock is held:
//      wait a random backoff and retry from step 1, up to max_attempts.
//   4. Otherwise the lock has expired by our clock: GETSET key new_expires_at.
//   5. If GETSET returned the very value we read in step 2, nobody took the
//      lock over between our GET and our GETSET: we hold it. (The
//      documentation phrases the check as "the old value is still an expired
//      timestamp"; the copied implementations compare with the value read,
//      which is what this one does.)
//   6. Otherwise another contender got there first: back off and retry from
//      step 1. Our GETSET has already overwritten the winner's timestamp with
//      ours — a quirk the documentation waves away ("a few seconds in the
//      future is not a problem") — so the winner's lock now expires when
//      *we* said. A GETSET that finds the key gone (nil) also counts as a
//      loss, as in the copied code, though it has just created a fresh key.
//   Release: DEL key, but only if our own timestamp has not passed by our own
//   clock ("a client holding a lock should always check the timeout didn't
//   expire before unlocking the key with DEL"). The DEL itself is a plain DEL:
//   if the check is wrong — our clock is slow — it deletes someone else's lock.
//
// The lease token is the timestamp string this client wrote: it is the only
// value the algorithm has, and two clients may write the same one.
//
// What it does not protect against (and locksim shows):
//   - Client clock skew: expiry is judged by each contender's own clock, so a
//     contender whose clock runs ahead of the holder's by more than the time
//     left on the lease takes it over while the holder still acts.
//   - The holder pausing past its TTL; a failover to a replica that never saw
//     the key; a restart without fsync; a partition or long delay.
//   It is safe against server clock jumps: the server never expires the key.
//   A client that dies while holding leaves a lock that others take over only
//   after its timestamp passes by their clocks (liveness only).
//   See ../shared/REFERENCE-VERDICTS.md.
#pragma once

#include <string>

#include "algorithms/algorithm_spec.h"
#include "algorithms/lock_algorithm.h"
#include "algorithms/retry_policy.h"

namespace locksim::algorithms {

class GetsetTimestamp : public LockAlgorithm {
 public:
  struct Params {
    Duration ttl = Duration::seconds(10);
    RetryPolicy retry = {20, Duration::millis(50), Duration::millis(150)};  // steps 1-6 each
    size_t server = 0;  // which Env redis connection
  };

  static constexpr const char* kName = "getset-timestamp";

  // Step 2's "key vanished, try SETNX again at once" loop, bounded so that a
  // key created and deleted in a tight cycle cannot keep us spinning.
  static constexpr int kImmediateRetriesMax = 10;

  explicit GetsetTimestamp(Params params);

  AcquireResult acquire(Env& env, const std::string& resource) override;
  ReleaseResult release(Env& env, const Lease& lease) override;
  std::string name() const override { return kName; }
  // The key never expires; its value is the lease's end on the writer's clock.
  StoreShape store_shape(const std::string& resource, size_t redis_servers) const override {
    (void)redis_servers;
    return StoreShape{resource, 1, true, false};
  }

  const Params& params() const { return params_; }

 private:
  Params params_;
};

// Its registry entry: parameters ttl, max-attempts, retry.
const AlgorithmSpec& getset_timestamp_spec();

}  // namespace locksim::algorithms
