// Tells the nemesis when the lock is next granted, and to whom: what a fault
// "at T on grant" waits for (faults/fault_schedule.h, Nemesis::GrantWatch).
//
// A grant is the moment the lock's store records a new holder: the token a
// quorum of serving servers hold as a live lock (sim::Deployment::
// lock_states) changes to a new one — a key set, a row committed, a lower
// lock node. That is before the grant's reply leaves the server, so a fault
// fired there can hold the reply (a partition) or lose what is not yet
// replicated (a crash a little later). The client granted is the token's
// prefix where the algorithm writes one ("c3:…", algorithms::make_token);
// GETSET's timestamp and ZooKeeper's node name none ("").
//
// Like the exposure monitor it only reads state, and it looks only while a
// fault waits: a run without such faults pays nothing, and its history is
// the same with or without the watch. Like the monitor, it skips a look when
// the backend's stamp (sim::Deployment::lock_state_stamp) has not moved and
// no held lock has reached its `expires`: the states, and so the token, are
// then the ones of the last look. A look was about 1,000 instructions after
// every event of a wait: 6 % of a sweep of the profiles that aim at grants.
// tests/grant_stamp_test.cpp holds the skipping watch against one that looks
// after every event.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/backend.h"
#include "sim/world.h"

namespace locksim::harness {

class GrantWatch {
 public:
  // `clients`: the client node names a token's prefix may name. `world` and
  // `deployment` must outlive it, and `world` must not run events after it
  // is gone.
  // `use_stamp` false: look after every event of a wait, as tests compare.
  GrantWatch(sim::World& world, sim::Deployment& deployment, sim::LockProbe probe,
             std::vector<std::string> clients, bool use_stamp = true);

  // Calls `fired` once, in an event of its own at the instant of the next
  // grant after now, with the client granted ("" when the token names none).
  // Never, if no grant comes before the run ends.
  void arm(std::function<void(std::string grantee)> fired);

 private:
  void look();
  // The token a quorum of serving servers hold as a live lock now, or ""
  // (the least such token, should two reach a quorum of a split brain).
  // Notes the stamp and the earliest expiry it was read under.
  const std::string& granted_token();
  // Whether granted_token() can differ from the last one it gave.
  bool may_have_changed() const;
  std::string client_of(const std::string& token) const;

  sim::World& world_;
  sim::Deployment& deployment_;
  sim::LockProbe probe_;
  std::vector<std::string> clients_;
  std::vector<std::function<void(std::string)>> waiting_;
  std::string granted_;  // the token granted at the last look, while anyone waits
  bool observing_ = false;
  const bool use_stamp_;
  // What the last look read under: the stamp (nullopt: the backend keeps
  // none, or not looked yet) and the earliest `expires` of a held lock.
  std::optional<uint64_t> looked_stamp_;
  TimePoint looked_until_{};
  // The last look's states and token; their strings keep their room.
  std::vector<sim::ServerLockState> states_;
  std::string token_;
};

}  // namespace locksim::harness
