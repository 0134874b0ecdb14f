// The nemesis: applies a fault schedule to the world, at its times.
//
// Jepsen's role split: clients do operations, the nemesis breaks things, and
// neither knows about the other. Every fault applied is logged with its true
// time, so reports can draw it on the timeline.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "faults/fault_schedule.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/world.h"

namespace locksim::faults {

struct AppliedFault {
  TimePoint at;  // true time it took effect
  std::string what;
};

class Nemesis {
 public:
  // Returns the node name of a client holding the lock now, or "".
  using HolderLookup = std::function<std::string()>;

  // `nodes` by name: every node a fault may name. A fault may also name
  // "@holder": whichever client holds the lock when the fault fires (none:
  // the fault is skipped, and the log says so). That is how a scenario says
  // "pause the holder" without depending on who won the race.
  Nemesis(sim::World& world, sim::Network& net, std::map<std::string, sim::Node*> nodes,
          HolderLookup holder = {});

  static constexpr const char* kHolder = "@holder";

  // Checks every name and value, then schedules every event. Throws
  // ConfigError naming `field_prefix[i]` for the first bad event.
  void install(const FaultSchedule& schedule, const std::string& field_prefix);

  const std::vector<AppliedFault>& log() const { return log_; }

 private:
  sim::Node& node(const std::string& name);
  // Resolves "@holder"; "" when nobody holds the lock.
  std::string resolve(const std::string& name) const;
  void apply(const FaultEvent& e);
  void note(std::string what);

  sim::World& world_;
  sim::Network& net_;
  std::map<std::string, sim::Node*> nodes_;
  HolderLookup holder_;
  std::vector<AppliedFault> log_;
};

}  // namespace locksim::faults
