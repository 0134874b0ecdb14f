// The nemesis: applies a fault schedule to the world, at its times.
//
// Jepsen's role split: clients do operations, the nemesis breaks things, and
// neither knows about the other. The nemesis reports every step it takes (a
// fault, its end, a fault it had to skip) through a narrow sink, at the true
// time it takes it; the runner turns each report into a :nemesis op of the
// history (history/history.h), so checkers, timelines and reports read faults
// and client ops from one stream, as Jepsen's tools do.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "faults/fault_schedule.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/world.h"

namespace locksim::faults {

class Nemesis {
 public:
  // Returns the node name of a client holding the lock now, or "".
  using HolderLookup = std::function<std::string()>;

  // Receives each step the moment the nemesis takes it, before the step's
  // effects (a crashed client's unfinished op is closed after its crash is
  // reported, so a history reads cause before effect):
  //   f      a Jepsen keyword: the fault's own (to_string(FaultKind): pause,
  //          drift, jump, crash, partition, heal, delay, loss), the end of one
  //          (resume, restart, heal for a partition with a `for`, delay with
  //          [a b] for a delay spike, loss with the rate that holds after
  //          it), or "skip" for an @holder (@primary) fault that found
  //          nobody to name.
  //          A timed fault ends only itself: the end of one partition
  //          restores only its links, the end of one loss brings back the
  //          rate of the loss faults still active (or the rate before them),
  //          and a node paused twice resumes when the later pause ends
  //          (one resume step);
  //   value  the targets, then the parameters: FaultEvent::value() of the
  //          fault as resolved (@holder replaced by the node); [node] for
  //          resume and restart; [] for a heal of every link, the
  //          partition's sides for the end of one partition; for skip, the
  //          skipped fault's keyword followed by its value as scheduled
  //          (naming @holder);
  //   note   why, for people: empty except for skip.
  // Called on the simulation's one thread, in true-time order.
  using StepSink = std::function<void(std::string_view f, std::vector<std::string> value,
                                      std::string_view note)>;

  // `nodes` by name: every node a fault may name. A fault may also name
  // "@holder": whichever client holds the lock when the fault fires (none:
  // the fault is skipped, and reported as a "skip" step). That is how a
  // scenario says "pause the holder" without depending on who won the race.
  // A fault that fires at a grant ('on held', 'on held+D') while nobody
  // holds yet (the grant's reply is still on its way) names the client
  // granted, where the store names one: it is the holder-to-be.
  // `sink` may be empty (the steps then go unrecorded: only for callers that
  // keep no history).
  Nemesis(sim::World& world, sim::Network& net, std::map<std::string, sim::Node*> nodes,
          HolderLookup holder = {}, StepSink sink = {});

  static constexpr const char* kHolder = "@holder";
  // "@primary": the server that is the primary (master, leader) when the
  // fault fires, as the deployment says (the first, when it has several):
  // how a schedule crashes the replica a failover just promoted. Needs a
  // lookup (set_primary_lookup); "" from it skips the fault like @holder.
  static constexpr const char* kPrimary = "@primary";
  // Returns the name of the deployment's current primary, or "".
  using PrimaryLookup = std::function<std::string()>;
  // Before install().
  void set_primary_lookup(PrimaryLookup lookup) { primary_ = std::move(lookup); }

  // "@grantee": the client the lock is granted to, for a fault that waits
  // for a grant (FaultEvent::after_grant). A GrantWatch is asked once per
  // such fault, at its time, and must call `fired` once, in an event of its
  // own at the instant of the lock's next grant, with the client granted (""
  // when the store's record names no client). Needs set_grant_watch().
  static constexpr const char* kGrantee = kGranteeTarget;
  using GrantWatch = std::function<void(std::function<void(std::string grantee)> fired)>;
  // Before install().
  void set_grant_watch(GrantWatch watch) { grant_watch_ = std::move(watch); }

  // Reports each fault still waiting for a grant ("no grant after its
  // time") or for its time after one ("the run ended before grant+D") as a
  // skip. Once, at the run's end, before the history is closed.
  void finish();

  // Checks every name and value, then schedules every event. Throws
  // ConfigError naming `field_prefix[i]` for the first bad event.
  void install(const FaultSchedule& schedule, const std::string& field_prefix);

 private:
  sim::Node& node(const std::string& name);
  // Resolves "@holder", "@primary" and "@grantee"; "" when there is nobody to name.
  std::string resolve(const std::string& name) const;
  void apply(const FaultEvent& e);
  // A fault with after_grant, at its time: waits for the grant, then applies.
  void await_grant(const FaultEvent& e);
  // Why `e`'s targets named nobody, for its skip.
  static std::string_view unresolved_note(const FaultEvent& e);
  // Resolves `e`'s targets in place; false when one of them names nobody.
  bool resolve_targets(FaultEvent& e) const;
  // Reports that `scheduled` (as written, naming @holder or @primary) was skipped.
  void report_skip(const FaultEvent& scheduled, std::string_view note);
  // The node faults with an end: a pause and its resume, a crash and its restart.
  void apply_pause(const FaultEvent& e);
  void apply_hang(const FaultEvent& e);
  // Runs `end` once `d` has passed, unless a later fault of the same kind
  // on `n` (its end time in `until`) holds it longer. `still_on` tells
  // whether the fault still holds `n`: never, when its entry is gone.
  void end_after(std::map<std::string, TimePoint>& until, sim::Node& n, Duration d,
                 std::function<bool()> still_on, std::function<void()> end);
  // A name a hang may target: a client ("c3") or @holder / @grantee.
  static bool names_client(const std::string& name);
  void apply_crash(const FaultEvent& e);
  // The link faults, each with its end (if it has a duration).
  void apply_partition(const FaultEvent& e);
  void apply_delay(const FaultEvent& e);
  void apply_loss(const FaultEvent& e);
  std::vector<const sim::Node*> nodes_of(const std::vector<std::string>& names);
  // Reports one step to the sink (see StepSink).
  void report(std::string_view f, std::vector<std::string> value, std::string_view note = {});

  // The loss faults on one pair of nodes: the rate before any timed one
  // (or the last untimed one's), and the timed ones still active, oldest
  // first. The newest active one's rate holds.
  struct LossLayers {
    double base_probability = 0.0;
    std::vector<std::pair<uint64_t, double>> active;  // (fault number, rate)
    double effective() const { return active.empty() ? base_probability : active.back().second; }
  };
  void set_loss_layer(const sim::Node& x, const sim::Node& y, uint64_t fault, const FaultEvent& e);
  double end_loss_layer(const sim::Node& x, const sim::Node& y, uint64_t fault);

  sim::World& world_;
  sim::Network& net_;
  // By node name: until when its pauses hold it (a second pause of a paused
  // node extends the first instead of being cut short by its resume).
  std::map<std::string, TimePoint> paused_until_;
  std::map<std::string, TimePoint> hung_until_;  // as paused_until_, for hangs
  // By the pair's node names (a, b) with a < b.
  std::map<std::pair<std::string, std::string>, LossLayers> loss_;
  uint64_t next_loss_fault_ = 1;
  std::map<std::string, sim::Node*> nodes_;
  HolderLookup holder_;
  PrimaryLookup primary_;
  GrantWatch grant_watch_;
  std::string grantee_;  // while a fault fired by a grant is applied: the client granted
  // Faults waiting for their grant, or granted and waiting out their
  // after_grant, by a number of their own (finish()'s skips).
  struct Awaiting {
    FaultEvent fault;
    bool granted = false;
  };
  std::map<uint64_t, Awaiting> awaiting_;
  uint64_t next_awaiting_ = 1;
  StepSink sink_;
};

}  // namespace locksim::faults
