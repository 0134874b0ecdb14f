// When a reader of the lock as the servers store it (sim::Deployment::
// lock_states: the grant watch, the lock tracer) must read it again after an
// event, and when the states it read last still stand.
//
// They stand while the deployment's stamp (Deployment::lock_state_stamp,
// the exposure monitor's since engine part 4) has not moved and no held
// lock has reached its `expires`: a held lock is the only state that
// changes by time alone; anything else (a write or expiry on a server, a
// crash, pause or restart, a clock step or drift, a promotion, a ZooKeeper
// quorum or cut) moves the stamp. Reading every server after every event
// cost the grant watch 6 % of a sweep. Only a stamp that is the World's
// count of every change (Redis, MySQL: every server's keyspace or rows,
// node state and clock add to it) covers every server's states. ZooKeeper's
// counts only what its fresh-contender answer reads, not a follower's
// applies, which a follower's state shows: its states, like those of a
// backend without a stamp, are read after every event.
// tests/lock_view_stamp_test.cpp holds both readers against reading after
// every event.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "env/time.h"
#include "sim/backend.h"

namespace locksim::harness {

class LockStateStamp {
 public:
  // `use_stamp` false: every look reads (what tests compare against).
  // `deployment` must outlive this.
  LockStateStamp(const sim::Deployment& deployment, bool use_stamp)
      : deployment_(deployment),
        use_stamp_(use_stamp && deployment.lock_state_stamp_is_world_count()) {}

  // Whether the states can differ, at `now`, from those last noted.
  bool may_have_changed(TimePoint now) const {
    if (!noted_stamp_) return true;
    return now >= noted_until_ || deployment_.lock_state_stamp() != noted_stamp_;
  }

  // Notes `states`, just read: they stand until the stamp moves or the
  // earliest held lock's expiry.
  void noted(const std::vector<sim::ServerLockState>& states) {
    noted_stamp_ = use_stamp_ ? deployment_.lock_state_stamp() : std::nullopt;
    noted_until_ = sim::LockExposure::kNoChange;
    for (const sim::ServerLockState& s : states) {
      if (s.kind == sim::ServerLockState::Kind::kHeld) {
        noted_until_ = std::min(noted_until_, s.expires);
      }
    }
  }

 private:
  const sim::Deployment& deployment_;
  const bool use_stamp_;
  std::optional<uint64_t> noted_stamp_;  // nullopt: read at the next look
  TimePoint noted_until_{};
};

}  // namespace locksim::harness
