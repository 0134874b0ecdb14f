// redlock: the multi-master lock of the Redis documentation ("Distributed
// Locks with Redis", section "The Redlock algorithm"), as its reference
// clients (redlock-rb, redlock-py, node-redlock) implement it.
//
// N independent masters, no replication between them: here every redis
// connection the Env has, N = env.redis_count().
//
// Steps (numbered as in the documentation):
//   1. token := a value unique to this attempt ("unique across all clients
//      and all lock requests"). t1 := the client's clock now.
//   2. For each node in turn: SET key token NX PX ttl_ms. Each request is
//      bounded by the connection's own timeout, which must be small compared
//      with the TTL, so a dead node costs little of the lease.
//   3. elapsed := client now - t1. The lock is acquired if and only if at
//      least `quorum` nodes (N/2+1 unless set) answered OK and the lease has
//      time left:
//   4.   validity := ttl - elapsed - (ttl * drift_factor + 2 ms)
//      (the drift term allows for the nodes' clocks running faster than the
//      client's; 2 ms for the nodes' expiry resolution).
//   5. Otherwise unlock *every* node — also those whose SET seemed to fail,
//      since a timed-out SET may have landed — with the compare-and-delete
//      script, then wait a random delay and go back to step 1, up to
//      max_attempts. The reference clients (redlock-py, redlock-rb,
//      node-redlock) keep one token for every attempt of an acquire
//      (parameter token=per-acquire): each attempt's unlock then also clears
//      a late SET of an earlier one, but an earlier attempt's unlock that
//      arrives late — held by a slow link — deletes the key a later attempt
//      of the same client set, which then holds the lock on fewer than a
//      quorum of nodes, and a second client takes it (a partition sweep
//      found it: docs/measurements.md, "Swarm workloads"). A fresh token
//      per attempt (the default) cannot be deleted that way; a late SET of
//      an earlier attempt then sits on its node until its TTL: a delay, not
//      a second holder.
//   A failed acquire is reported as unknown (Jepsen's :info) only if our key
//   may still be on a quorum of nodes: those whose SET did not definitely
//   fail and whose last unlock got no answer. Fewer than that is no lock.
//   Release: the compare-and-delete script on every node.
//   Extend (optional): a value-checked PEXPIRE on every node; as in steps 3-4
//   it counts only if a quorum agreed and the new validity is positive, and
//   only if it finished before the old lease ran out.
//
// What it does not protect against (and locksim shows):
//   - The holder pausing (GC, SIGSTOP) in its critical section past the
//     validity: nothing checked before the pause helps.
//   - Elapsed time is measured with the client's wall clock, as the reference
//     clients do: a backward step during step 2 makes elapsed small or
//     negative and inflates validity past the TTL.
//   - Nodes' clocks running faster than drift_factor allows, or jumping
//     forward: keys expire early on a majority.
//   - A node restarting without fsync (and without waiting a TTL before
//     rejoining): it forgets the key, and one such node of a bare majority
//     lets a second client in.
//   - Each "node" being a master with an async replica that is failed over.
//   A quorum of at most N/2 is accepted so scenarios can show why it is
//   unsafe (two disjoint quorums exist); the default is a true majority.
//   See ../shared/REFERENCE-VERDICTS.md.
#pragma once

#include <string>
#include <vector>

#include "algorithms/algorithm_spec.h"
#include "algorithms/lock_algorithm.h"
#include "algorithms/retry_policy.h"

namespace locksim::algorithms {

struct ExtendResult {
  Outcome outcome = Outcome::kFail;
  std::string detail;
};

class Redlock : public LockAlgorithm {
 public:
  struct Params {
    Duration ttl = Duration::seconds(10);
    size_t quorum = 0;           // 0: a majority of the nodes, N/2+1
    double drift_factor = 0.01;  // in [0, 1)
    RetryPolicy retry = {3, Duration::millis(50), Duration::millis(200)};  // rounds, steps 1-5
    bool token_per_attempt = true;  // false: one token for all attempts (the reference clients)
  };

  static constexpr const char* kName = "redlock";

  // Extends a lease only if the key still holds our token.
  static constexpr const char* kExtendScript =
      "if redis.call(\"get\",KEYS[1]) == ARGV[1] then "
      "return redis.call(\"pexpire\",KEYS[1],ARGV[2]) else return 0 end";

  explicit Redlock(Params params);

  AcquireResult acquire(Env& env, const std::string& resource) override;
  ReleaseResult release(Env& env, const Lease& lease) override;
  std::string name() const override { return kName; }

  // Resets the lease's TTL on every node. On kOk, `lease.acquired_local`
  // becomes the moment the extension began and `lease.validity` the time left
  // from the moment it returned, as after acquire. On failure `lease` is
  // unchanged: the old validity still bounds what the client may assume, and
  // it should release when done (nodes that did extend keep our key a TTL).
  ExtendResult extend(Env& env, Lease& lease);

  // Checks the parameters against the number of redis servers a run gives
  // each client. Empty when fine, else the problem in one line (naming the
  // `quorum` parameter), for the harness to report as a configuration error.
  std::string validate(size_t n_servers) const;
  std::string check_servers(size_t redis_servers) const override { return validate(redis_servers); }
  // A fresh contender needs the quorum of masters free.
  StoreShape store_shape(const std::string& resource, size_t redis_servers) const override {
    return StoreShape{resource, quorum_for(redis_servers), false};
  }

  // The quorum in effect with n_servers nodes.
  size_t quorum_for(size_t n_servers) const;
  // ttl * drift_factor + 2 ms: the part of the TTL the client never counts on.
  Duration drift() const;

  const Params& params() const { return params_; }

 private:
  // Compare-and-delete on every node. A node that answers is cleared from
  // `may_hold`; one that does not keeps whatever it had. Returns how many
  // nodes did not answer.
  size_t unlock_all(Env& env, const std::string& resource, const std::string& token,
                    std::vector<bool>& may_hold);

  Params params_;
};

// Its registry entry: parameters ttl, quorum, drift-factor, max-attempts,
// retry; 5 masters unless the run says otherwise.
const AlgorithmSpec& redlock_spec();

}  // namespace locksim::algorithms
