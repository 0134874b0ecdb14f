// The lock as each server stored it, over a whole run: what `locksim
// explain` (checkers/explain.h) reads to tell how a store stopped protecting
// its holder, and what the timeline draws as one lane per server.
//
// Plain data, recorded by the simulation (harness/lock_tracer.h) from each
// server's own state (sim::Deployment::lock_states) after every event, so a
// change is stamped with the instant it happened: a key that expires by its
// server's clock changes at its expiry instant, not at the next event. It
// lives here, beside the checkers, because a checker reads it and checkers
// do not see the simulator. Where the lock has a queue of waiters beside it
// (Redisson's fair lock), each state carries that queue's first waiters
// too: a free lock the queue still keeps from everyone is told from them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "env/time.h"

namespace locksim::checkers {

// One waiter in a fair lock's queue (Redisson's fair lock keeps one beside
// the lock: a list of waiter ids and a sorted set of their timeouts), as a
// server stores it.
struct QueuedWaiter {
  std::string id;  // as the queue keeps it: the waiter's token ("c1:9a0f...")
  // Its timeout as stored: unix ms on the clock of the client that wrote
  // it; every script compares it with its own caller's clock and drops the
  // head once that clock has reached it. nullopt: no score.
  std::optional<int64_t> timeout_ms{};
  // The true time at which a correct clock reaches timeout_ms; kNever (below)
  // when it has none or it lies too far ahead to matter.
  TimePoint due = TimePoint{Duration::max().ns};
  bool operator==(const QueuedWaiter&) const = default;
};

struct ServerLock {
  enum class Kind { kDown, kAbsent, kHeld, kExpired };
  std::string server;
  Kind kind = Kind::kAbsent;
  std::string holder;   // the token the store keeps (kHeld, kExpired)
  bool serving = true;  // its answer counts: a master, the primary, the serving leader
  // kHeld: the true time it expires if nothing changes; kNever when only an
  // event ends it (a key with no TTL, a ZooKeeper node).
  static constexpr TimePoint kNever = TimePoint{Duration::max().ns};
  TimePoint expires = kNever;
  // A fair lock's queue of waiters, head first: the lock goes only to its
  // head, so a head that never asks again keeps a free lock from everyone
  // behind it. At most the first few waiters (sim::ServerLockState::
  // kQueueKeptMax); queue_length counts them all. Empty for a lock without
  // a queue, and on a down server.
  std::vector<QueuedWaiter> queue{};
  size_t queue_length = 0;
  bool operator==(const ServerLock&) const = default;
};

// "down", "absent", "held", "expired"
const char* to_string(ServerLock::Kind kind);

// The same lock, whatever its queue: a change of the queue alone leaves the
// lock where it was (the timeline's lanes draw the lock).
bool same_lock(const ServerLock& a, const ServerLock& b);

// One server's state changed at `at` to `after`; `before` is what it was.
struct LockChange {
  TimePoint at;
  ServerLock before;
  ServerLock after;
};

struct LockTrace {
  bool supported = false;  // false: not recorded (live, a file, a backend that cannot tell)
  std::vector<ServerLock> initial;  // each server at the start, in the deployment's order
  std::vector<LockChange> changes;  // in true-time order (ties: the order they were seen)
};

// `states` with `change` applied: its server's entry becomes change.after.
// Precondition: the server is in `states`.
void apply(std::vector<ServerLock>& states, const LockChange& change);

// Each server's state at `at` (after every change at or before it).
std::vector<ServerLock> states_at(const LockTrace& trace, TimePoint at);

}  // namespace locksim::checkers
