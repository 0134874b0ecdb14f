// Records the lock as each server stores it, over a whole run
// (checkers/lock_trace.h), for `locksim explain` and the timeline's lanes.
//
// Like the exposure monitor (harness/exposure_monitor.h) it looks after every
// World event and only reads state, so a run's history is the same with or
// without it. Unlike the monitor it never wakes the World: a held lock names
// the instant it will expire if nothing happens (sim::ServerLockState::
// expires), so when the next look finds it expired without anything else
// having changed, the change is stamped at that instant. It reads the
// servers again only when what it read last may no longer stand
// (harness/lock_state_stamp.h); still dear enough (every server's state
// after every event that changed one) that only a run that is explained or
// drawn turns it on.
#pragma once

#include <vector>

#include "checkers/lock_trace.h"
#include "harness/lock_state_stamp.h"
#include "sim/backend.h"
#include "sim/world.h"

namespace locksim::harness {

class LockTracer {
 public:
  // Reads every server's lock now, and installs itself as an observer of
  // `world`'s events. `world` and `deployment` must outlive it, and `world`
  // must not run events after it is gone. `use_stamp` false: read after
  // every event (what tests compare against).
  LockTracer(sim::World& world, sim::Deployment& deployment, sim::LockProbe probe, bool use_stamp);

  // The trace up to `end`, changes in true-time order.
  checkers::LockTrace finish(TimePoint end);

 private:
  void look();

  sim::World& world_;
  sim::Deployment& deployment_;
  sim::LockProbe probe_;
  std::vector<sim::ServerLockState> last_;
  std::vector<sim::ServerLockState> now_;  // look()'s buffer, swapped with last_
  LockStateStamp stamp_;                   // whether last_ still stands
  checkers::LockTrace trace_;
};

}  // namespace locksim::harness
