// The exposure monitor skips asking a backend after an event that moved
// neither its stamp nor the holds (Deployment::lock_state_stamp: the World's
// count of changes for Redis and MySQL, sim/change_count.h; for ZooKeeper
// the sum of what its answer reads, ZkEnsemble::state_stamp). That is safe only if every
// change to what a backend answers from bumps a counter: a write or expiry,
// a crash, pause or restart, a clock step or drift, a promotion, a
// ZooKeeper quorum or cut. exposure_test.cpp holds the monitor's logic with
// a store the test drives; this holds the real simulated backends: over
// every sweep algorithm under every fault profile, the stamped run's
// exposure (its windows and its count of looks) is the one a run that asks
// after every event of a hold gets. A path that changes a server's state
// without counting it would show here as a window opened or closed late.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>

#include "faults/fault_schedule.h"
#include "harness/prepared_run.h"
#include "harness/scenario.h"
#include "harness/simulation.h"
#include "harness/sweep/sweep.h"

namespace locksim::harness {
namespace {

constexpr uint64_t kSeedsPerCell = 3;

checkers::ExposureSamples exposure_of(const RunConfig& config, bool ignore_stamp) {
  const PreparedRun prepared = prepare_run(config);
  SimWatch watch;
  watch.exposure_ignores_stamp = ignore_stamp;
  return run_simulation(prepared, watch).exposure;
}

// Runs `c` stamped and asking after every event: the same support and
// looks, and each window the same (whose, opening and closing at the same
// instant, believed or not). Returns the asking-always run's exposure.
checkers::ExposureSamples same_exposure_both_ways(const RunConfig& c) {
  const checkers::ExposureSamples stamped = exposure_of(c, false);
  checkers::ExposureSamples always = exposure_of(c, true);
  EXPECT_EQ(stamped.supported, always.supported);
  EXPECT_EQ(stamped.samples, always.samples);
  EXPECT_EQ(stamped.windows.size(), always.windows.size());
  for (size_t i = 0; i < std::min(stamped.windows.size(), always.windows.size()); ++i) {
    const checkers::ExposureWindow& x = always.windows[i];
    const checkers::ExposureWindow& y = stamped.windows[i];
    EXPECT_EQ(std::tie(x.client, x.acquire_index, x.start, x.end, x.believed),
              std::tie(y.client, y.acquire_index, y.start, y.end, y.believed))
        << "window " << i;
  }
  return always;
}

TEST(ExposureStamp, EveryBackendUnderEveryProfileGivesTheWindowsOfAskingAlways) {
  SweepPlan plan;
  plan.algorithms = parse_algorithm_list("all", "algorithms");
  plan.profiles = parse_profile_list("all", "profiles");
  plan.base.duration = Duration::seconds(60);
  int runs = 0, windows = 0;
  int64_t looks = 0;
  for (size_t a = 0; a < plan.algorithms.size(); ++a) {
    for (size_t p = 0; p < plan.profiles.size(); ++p) {
      // Seeds of their own in every cell: 3 x 15 x 8 schedules.
      const uint64_t cell = a * plan.profiles.size() + p;
      for (uint64_t seed = kSeedsPerCell * cell + 1; seed <= kSeedsPerCell * (cell + 1); ++seed) {
        const RunConfig c = plan.config_of(plan.algorithms[a], plan.profiles[p], seed);
        SCOPED_TRACE(c.algorithm + " / " + plan.profiles[p] + " / seed " + std::to_string(seed));
        const checkers::ExposureSamples always = same_exposure_both_ways(c);
        if (::testing::Test::HasFailure()) return;  // the first differing run is enough
        ++runs;
        windows += static_cast<int>(always.windows.size());
        looks += always.samples;
      }
    }
  }
  // The comparison had something to compare: runs that held and were
  // exposed (the profiles break most of these locks).
  EXPECT_EQ(runs, static_cast<int>(kSeedsPerCell * plan.algorithms.size() * plan.profiles.size()));
  EXPECT_GT(windows, 100);
  EXPECT_GT(looks, 100'000);
}

// Where the sweep's seeds rarely go: a lock row lost in a failover, which a
// fresh contender meets the moment clients are told of the new primary (the
// group's publication, counted by FailoverGroup's ChangeCount). The window
// opens at that instant in both runs, over several seeds of the story.
TEST(ExposureStamp, APublishedPrimaryWithoutTheRowOpensTheWindowAtOnce) {
  int exposed = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    RunConfig c = load_scenario("mysql-center-failover").config;
    c.seed = seed;
    SCOPED_TRACE("seed " + std::to_string(seed));
    exposed += same_exposure_both_ways(c).windows.empty() ? 0 : 1;
  }
  EXPECT_GE(exposed, 5) << "the story loses the row in most seeds";
}

// Where ZooKeeper's lock is exposed: a lone holder, frozen past its session
// timeout, whose node the leader deletes (the window opens at that apply);
// then the leader is cut off from its followers (it closes: no quorum heard
// now), the cut heals (it opens again), the leader freezes for a moment (it
// closes and opens again: the node's state, its role unchanged), and the
// leader crashes (it closes, and opens once a new leader serves). Each step
// moves a different term of ZkEnsemble::state_stamp; a term left out opens
// or closes a window late.
TEST(ExposureStamp, ZooKeeperWindowsFollowTheLeadersTreeQuorumAndNode) {
  int windows = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    RunConfig c = load_scenario("zk-curator-gc-pause").config;
    c.seed = seed;
    c.workload.clients = 1;
    c.workload.hold_min = c.workload.hold_max = Duration::seconds(45);
    c.faults.events.clear();
    for (const char* f : {"pause @holder at 2s for 40s", "partition zk-3|zk-1,zk-2 at 20s for 5s",
                          "pause zk-3 at 28s for 2s", "crash zk-3 at 33s for 5s"}) {
      c.faults.events.push_back(faults::parse_fault(f, "fault"));
    }
    SCOPED_TRACE("seed " + std::to_string(seed));
    windows += static_cast<int>(same_exposure_both_ways(c).windows.size());
  }
  EXPECT_GE(windows, 6 * 4) << "each seed opens at least four times";
}

}  // namespace
}  // namespace locksim::harness
