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
// the same with or without the watch. It reads the servers again only when
// what it read last may no longer stand (harness/lock_state_stamp.h).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/lock_state_stamp.h"
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
             std::vector<std::string> clients, bool use_stamp);

  // Calls `fired` once, in an event of its own at the instant of the next
  // grant after now, with the client granted ("" when the token names none).
  // Never, if no grant comes before the run ends.
  void arm(std::function<void(std::string grantee)> fired);

 private:
  void look();
  // The token a quorum of serving servers hold as a live lock now (the
  // least such token, should two reach a quorum of a split brain), or "";
  // a view into states_, valid until the next read.
  std::string_view granted_token();
  std::string client_of(const std::string& token) const;

  sim::World& world_;
  sim::Deployment& deployment_;
  sim::LockProbe probe_;
  std::vector<std::string> clients_;
  std::vector<std::function<void(std::string)>> waiting_;
  std::string granted_;  // the token granted at the last look, while anyone waits
  bool observing_ = false;
  LockStateStamp stamp_;  // whether the last look's states still stand
  // The last look's states; their strings keep their room.
  std::vector<sim::ServerLockState> states_;
};

}  // namespace locksim::harness
