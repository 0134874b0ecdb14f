// The watch that faults "on grant" wait on (harness/grant_watch.h) skips a
// look when the backend's stamp has not moved and no held lock has reached
// its expiry: the token it would read is then the one it read last. That is
// safe only if every change to the lock's states moves the stamp or is an
// expiry, as for the exposure monitor (tests/exposure_stamp_test.cpp). Here
// the real simulated backends hold it: over every sweep algorithm under
// every fault profile, a run whose watch skips has the history, fault ops
// and their instants included, of a run whose watch looks after every event
// of a wait. A change the stamp missed would fire a fault late (or never).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "harness/prepared_run.h"
#include "harness/simulation.h"
#include "harness/sweep/sweep.h"
#include "history/history_io.h"

namespace locksim::harness {
namespace {

constexpr uint64_t kSeedsPerCell = 5;

struct Watched {
  std::string history;  // EDN: every op, the nemesis's included, with its time
  bool waits_for_grant = false;
};

Watched run_watched(const RunConfig& config, bool ignore_stamp) {
  const PreparedRun prepared = prepare_run(config);
  const SimOutput out =
      run_simulation(prepared, SimWatch{.grant_watch_ignores_stamp = ignore_stamp});
  Watched w{history::to_edn(out.history), false};
  for (const faults::FaultEvent& e : out.profile_faults.events) {
    if (e.after_grant) w.waits_for_grant = true;
  }
  return w;
}

TEST(GrantStamp, EveryBackendUnderEveryProfileFiresWhereLookingAlwaysFires) {
  SweepPlan plan;
  plan.algorithms = parse_algorithm_list("all", "algorithms");
  plan.profiles = parse_profile_list("all", "profiles");
  plan.base.duration = Duration::seconds(60);
  int runs = 0, waiting_runs = 0;
  for (size_t a = 0; a < plan.algorithms.size(); ++a) {
    for (size_t p = 0; p < plan.profiles.size(); ++p) {
      // Seeds of their own in every cell, apart from the exposure test's.
      const uint64_t cell = a * plan.profiles.size() + p;
      for (uint64_t seed = 5000 + kSeedsPerCell * cell + 1;
           seed <= 5000 + kSeedsPerCell * (cell + 1); ++seed) {
        const RunConfig c = plan.config_of(plan.algorithms[a], plan.profiles[p], seed);
        SCOPED_TRACE(c.algorithm + " / " + plan.profiles[p] + " / seed " + std::to_string(seed));
        const Watched skipping = run_watched(c, false);
        const Watched always = run_watched(c, true);
        ASSERT_EQ(skipping.waits_for_grant, always.waits_for_grant);
        // The first differing run is enough (a whole history per failure).
        ASSERT_EQ(skipping.history, always.history);
        ++runs;
        waiting_runs += always.waits_for_grant ? 1 : 0;
      }
    }
  }
  // The comparison had something to compare: schedules that wait for a
  // grant (about one run in ten: half the crashes and cuts of the profiles
  // that aim at grants).
  EXPECT_EQ(runs, static_cast<int>(kSeedsPerCell * plan.algorithms.size() * plan.profiles.size()));
  EXPECT_GT(waiting_runs, runs / 20);
}

}  // namespace
}  // namespace locksim::harness
