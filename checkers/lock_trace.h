// The lock as each server stored it, over a whole run: what `locksim
// explain` (checkers/explain.h) reads to tell how a store stopped protecting
// its holder, and what the timeline draws as one lane per server.
//
// Plain data, recorded by the simulation (harness/lock_tracer.h) from each
// server's own state (sim::Deployment::lock_states) after every event, so a
// change is stamped with the instant it happened: a key that expires by its
// server's clock changes at its expiry instant, not at the next event. It
// lives here, beside the checkers, because a checker reads it and checkers
// do not see the simulator.
#pragma once

#include <string>
#include <vector>

#include "env/time.h"

namespace locksim::checkers {

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
  bool operator==(const ServerLock&) const = default;
};

// "down", "absent", "held", "expired"
const char* to_string(ServerLock::Kind kind);

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
