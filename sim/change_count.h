// How many times one part of the simulated state changed (a server's keys or
// rows, a node's state, a clock's line, a network cut), counted twice: in the
// part's own count, which its owner reads (a replica's last shipped version),
// and, once attached, in a total its World keeps for the whole run
// (World::state_changes).
//
// Why the total: Deployment::lock_state_stamp must grow with every change to
// what a lock's store answers from, and the exposure monitor reads it after
// every event of a hold. Summing each server's counters there cost up to 60
// instructions an event (five Redlock masters); with every counter also
// bumping one total, the stamp is one load. (ZooKeeper sums a few counters of
// its own instead: ZkEnsemble::state_stamp says why.) The total grows with
// changes the stamp did not sum before (a replica's keys, a client's clock):
// the monitor then asks once more, which the stamp's contract allows (it may
// grow more often than the answer changes, never less).
#pragma once

#include <cstdint>

namespace locksim::sim {

class ChangeCount {
 public:
  void bump() {
    ++own_;
    if (total_ != nullptr) ++*total_;
  }
  uint64_t value() const { return own_; }
  // From now on every bump also counts in `*total` (a World's, through
  // World::count_changes_of), which must outlive every later bump: a run
  // destroys its World before its servers and nodes, none of which bumps
  // when destroyed. Unattached (a store made outside a World, in a unit
  // test), it counts only its own.
  void attach(uint64_t* total) { total_ = total; }

 private:
  uint64_t own_ = 0;
  uint64_t* total_ = nullptr;
};

}  // namespace locksim::sim
