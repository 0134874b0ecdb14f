// LockAlgorithm: acquire and release one named lock through an Env.
//
// An implementation holds only its parameters (immutable after construction),
// so one instance serves every client of a run; all per-client state lives in
// the Lease it returns and in the Env it is given.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "env/env.h"
#include "env/task_stop.h"

namespace locksim::algorithms {

// The background renewal of one lease (Redisson's watchdog): shared by the
// holder, whose release stops it, and the task of the client's process that
// renews. Release requests the stop; a task waiting for its next renewal
// ends then (Env::sleep_unless_stopped), as Redisson cancels the renewal's
// timer at unlock. Thread-safe: live mode runs the task on a thread of its own.
struct LeaseRenewal {
  TaskStop stop;
};

// What a client holds after a successful acquire.
//
// Invariant of a lease an acquire returned with kOk (is_well_formed): it
// names its resource and carries the non-empty token this acquire wrote.
// Asserted where acquire makes it and where release uses it. Its validity is
// NOT always positive: a reply slower than the TTL (or a client clock step)
// leaves a lease that is already over, and the client is told so honestly.
struct Lease {
  std::string resource;                  // the lock's name ("lock:resource")
  std::string token;                     // unique value written by this acquire
  std::optional<uint64_t> fence;         // fencing token, where the algorithm has one
  TimePoint acquired_local;              // client-clock time the acquire began
  Duration validity = Duration::zero();  // how long the client may assume it holds
  // Set when the client's process renews the lease in the background (the
  // validity then counts from the last renewal the client cannot see).
  std::shared_ptr<LeaseRenewal> renewal = nullptr;
};

// The invariant above: non-empty resource and token.
inline bool is_well_formed(const Lease& lease) {
  return !lease.resource.empty() && !lease.token.empty();
}

// Jepsen's three outcomes: the operation happened, it did not, or we cannot
// know (a timeout: the server may have applied it).
enum class Outcome { kOk, kFail, kUnknown };

struct AcquireResult {
  Outcome outcome = Outcome::kFail;
  Lease lease;         // meaningful when outcome == kOk
  std::string detail;  // why it failed or is unknown, for histories and reports
  int attempts = 0;
};

struct ReleaseResult {
  Outcome outcome = Outcome::kFail;  // kFail: the lock was no longer ours
  std::string detail;
};

// Why one attempt failed, in the words a history shows: the server's error,
// the transport's, or `refused` (the server answered no), written over
// `detail` (a retry loop's failures then reuse its room: no allocation per
// attempt). Sets *unknown when the reply was lost, since the write may have
// landed all the same.
void describe_failed_attempt(const Reply& r, std::string_view refused, bool* unknown,
                             std::string& detail);

// One algorithm parameter as `locksim list` shows it.
struct ParamInfo {
  std::string name;
  std::string default_value;
  std::string help;
};

// How an algorithm's lock sits in its store, for the exposure checker's
// question "would a fresh contender get it right now?" (sim::LockProbe,
// answered by the backend from its own state).
struct StoreShape {
  std::string key;                    // Redis key, MySQL Flock_name, ZooKeeper lock node
  size_t quorum = 1;                  // Redis masters that must grant (Redlock's quorum)
  bool value_is_deadline_ms = false;  // the value is the lease's end on the writer's clock (GETSET)
  // The holder the store keeps starts with the writer's client name and ':'
  // (make_token), so a grant can be told to whom it went the moment the
  // store records it. Not GETSET's timestamp, nor a ZooKeeper node.
  bool holder_names_client = true;
  // Redis: a fair lock's queue of waiters beside the lock (Redisson's fair
  // lock): a list of waiter ids, head first (the only one the lock may go
  // to), and a sorted set scoring each with its timeout in unix ms from the
  // writer's clock. `locksim explain` reads it. Empty: the lock has none.
  std::string queue_key{};
  std::string queue_timeouts_key{};
};

class LockAlgorithm {
 public:
  virtual ~LockAlgorithm() = default;

  // Tries to take `resource`, retrying inside up to the algorithm's own bound.
  virtual AcquireResult acquire(Env& env, const std::string& resource) = 0;

  // Gives the lease back. Called at most once per successful acquire.
  // Precondition: is_well_formed(lease).
  virtual ReleaseResult release(Env& env, const Lease& lease) = 0;

  virtual std::string name() const = 0;

  // The critical section: the client works for `planned` of true time while
  // it believes it holds `lease`. Returns true when it worked to the end,
  // false when it stopped early because the algorithm learned the lock may be
  // lost (zk-curator on a SUSPENDED connection); either way the caller
  // releases next. Default: sleeps `planned` and returns true.
  virtual bool hold(Env& env, const Lease& lease, Duration planned) {
    (void)lease;
    env.sleep(planned);
    return true;
  }

  // Checks the parameters against the number of Redis servers (groups) the
  // run gives it; "" when fine, else a one-line reason naming the parameter
  // (e.g. a Redlock quorum larger than N). Called before a run starts.
  virtual std::string check_servers(size_t redis_servers) const {
    (void)redis_servers;
    return {};
  }

  // Where and how `resource`'s lock lives in the store, given the run's Redis
  // servers (groups). Default: the key is the resource, one server grants.
  virtual StoreShape store_shape(const std::string& resource, size_t redis_servers) const {
    (void)redis_servers;
    return StoreShape{resource, 1, false};
  }
};

}  // namespace locksim::algorithms
