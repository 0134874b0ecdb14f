// The ZooKeeper lock recipe (ephemeral-sequential), in three variants.
//
// Sources: the ZooKeeper documentation, "ZooKeeper Recipes and Solutions",
// section Locks; Apache Curator's InterProcessMutex and LockInternals (the
// acquire loop), its protected mode (CreateBuilder.withProtection) and its
// ConnectionStateListener rules (SUSPENDED / LOST).
//
// Steps (all variants):
//   1. create an EPHEMERAL_SEQUENTIAL node <lock>/lock- : the server appends
//      a 10-digit number from the parent's count of child creates (if <lock>
//      or an ancestor is missing, NONODE: make each missing one persistent,
//      as Curator's creatingParentContainersIfNeeded does, and create again);
//   2. getChildren(<lock>), sort by sequence number; if ours is the lowest,
//      we hold the lock;
//   3. else watch the next-lower node with exists(watch) — only that one, so
//      a release wakes one waiter, not the herd — wait for its deletion (or
//      for our own bounded wait to run out: then delete our node and fail),
//      and go to 2;
//   4. release: delete our node. The fencing token is our node's czxid,
//      which grows across the whole ensemble.
//
// The variants differ where the lesson is:
//   zk-recipe  — the bare recipe. Ignores connection state: keeps acting
//                while disconnected, and when a create's reply is lost
//                (CONNECTIONLOSS) creates again in the same session. The
//                first node is an orphan: the lowest, owned by a live
//                session, so it blocks everyone — its creator included,
//                which waits on it as its predecessor — until that session
//                ends, however long the client lives.
//   zk-curator — as Curator: protected mode (a per-acquire GUID in the node
//                name, "_c_<guid>-lock-"; after a CONNECTIONLOSS on create it
//                looks for its own node instead of making another, retrying
//                the lookup until one answers before it creates again, and
//                deletes one found under an older session); the
//                connection-state rule: on SUSPENDED (disconnected) a holder
//                must assume it no longer holds the lock and stop working;
//                LOST once the session expired or the session timeout has run
//                out on the client's clock since SUSPENDED (then a new
//                session). What it cannot help: a process paused past its
//                session timeout notices nothing until it runs again.
//   zk-herd    — Curator's rules, but every waiter watches the lock node's
//                children (the herd effect the documentation warns about):
//                each release wakes every waiter, for the comparison of
//                messages per acquire.
//
// Written against Env only (Env::zk()), so the same code runs on the
// simulated ensemble and against real ZooKeeper.
#pragma once

#include <string>
#include <vector>

#include "algorithms/lock_algorithm.h"
#include "algorithms/registry.h"
#include "env/zk_connection.h"

namespace locksim::algorithms {

// The lock node for a resource: "/locksim/locks/<resource>" ('/' in the
// resource becomes '_', so it is one node).
std::string zk_lock_path(const std::string& resource);

class ZkLock : public LockAlgorithm {
 public:
  enum class Variant { kRecipe, kCurator, kHerd };

  struct Params {
    Variant variant = Variant::kCurator;
    // How long one acquire waits for the lock before giving up (Curator's
    // acquire(time, unit)); the waiter's node is deleted then.
    Duration wait = Duration::seconds(10);
    // Retries of one ZooKeeper operation after CONNECTIONLOSS (Curator's
    // RetryPolicy), and of a whole attempt after the session was lost.
    int retries_max = 5;
  };

  explicit ZkLock(const Params& p);

  AcquireResult acquire(Env& env, const std::string& resource) override;
  ReleaseResult release(Env& env, const Lease& lease) override;
  bool hold(Env& env, const Lease& lease, Duration planned) override;
  std::string name() const override;
  // The lock is the recipe's parent node: free when it has no children.
  StoreShape store_shape(const std::string& resource, size_t redis_servers) const override {
    (void)redis_servers;
    return StoreShape{zk_lock_path(resource), 1, false, false};
  }

 private:
  // Why a wait for our turn ended.
  enum class Turn { kHeld, kTimedOut, kSessionLost, kNodeGone, kError };

  struct Attempt {
    std::string node;  // our node's full path
    ZkStat stat;
    ZkError error = ZkError::kOk;
    bool unknown = false;  // a create whose outcome we could not learn
  };

  // The lock node's missing ancestors and itself, made persistent (kOk), or
  // the first error.
  ZkError make_parents(ZkConnection& zk, const std::string& lock) const;
  // Our sequential node, made in at most retries_max + 1 tries. After a
  // CONNECTIONLOSS, Curator's rules look for the node the lost create may
  // have made (find_protected) before any other create; kSessionExpired
  // when the session went meanwhile (and the node with it).
  Attempt create_node(Env& env, ZkConnection& zk, const std::string& lock) const;
  Attempt find_protected(ZkConnection& zk, const std::string& lock,
                         const std::string& prefix) const;
  Turn wait_for_turn(Env& env, ZkConnection& zk, const std::string& lock, const std::string& node,
                     TimePoint deadline_local) const;
  bool session_lost(Env& env, ZkConnection& zk, const ZkEvent& e,
                    std::optional<TimePoint>& suspended_since) const;
  bool curator_rules() const { return params_.variant != Variant::kRecipe; }
  // A waiter that gives up deletes its node; under Curator's rules the delete
  // is guaranteed (retried across CONNECTIONLOSS), so a delete lost in a
  // leader failover does not leave an orphan that blocks everyone for as
  // long as our session lives. Returns the last delete's error.
  ZkError leave_queue(Env& env, ZkConnection& zk, const std::string& node) const;

  Params params_;
};

// The AlgorithmSpec entries of zk-recipe, zk-curator and zk-herd (name,
// summary, params, make), for the registry to append.
std::vector<AlgorithmSpec> zk_algorithm_specs();

}  // namespace locksim::algorithms
