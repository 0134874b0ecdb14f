// The two readers of the lock as the servers store it, the watch that
// faults "on grant" wait on (harness/grant_watch.h) and the lock tracer
// (harness/lock_tracer.h), read it again only when the backend's stamp has
// moved or a held lock has reached its expiry (harness/lock_state_stamp.h).
// That is safe only if every change to the lock's states moves the stamp or
// is an expiry, as for the exposure monitor (tests/exposure_stamp_test.cpp).
// Here the real simulated backends hold it: over every sweep algorithm
// under every fault profile, a run whose readers skip has the history (the
// fault ops and their instants included) and the lock trace of a run whose
// readers read after every event. A change the stamp missed would fire a
// fault late, or never, or date a server's change late.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "checkers/lock_trace.h"
#include "harness/prepared_run.h"
#include "harness/simulation.h"
#include "harness/sweep/sweep.h"
#include "history/history_io.h"

namespace locksim::harness {
namespace {

constexpr uint64_t kSeedsPerCell = 5;

struct Watched {
  std::string history;  // EDN: every op, the nemesis's included, with its time
  checkers::LockTrace trace;
  bool waits_for_grant = false;
};

Watched run_watched(const RunConfig& config, bool ignore_stamp) {
  const PreparedRun prepared = prepare_run(config);
  SimWatch watch;
  watch.trace_lock = true;
  watch.lock_views_ignore_stamp = ignore_stamp;
  const SimOutput out = run_simulation(prepared, watch);
  Watched w{history::to_edn(out.history), out.lock_trace, false};
  for (const faults::FaultEvent& e : out.profile_faults.events) {
    if (e.after_grant) w.waits_for_grant = true;
  }
  return w;
}

// The same trace: each server's first state, and each change at the same
// instant, from the same state to the same state.
void expect_same_trace(const checkers::LockTrace& x, const checkers::LockTrace& y) {
  ASSERT_EQ(x.supported, y.supported);
  ASSERT_EQ(x.initial, y.initial);
  ASSERT_EQ(x.changes.size(), y.changes.size());
  for (size_t i = 0; i < x.changes.size(); ++i) {
    const checkers::LockChange& a = x.changes[i];
    const checkers::LockChange& b = y.changes[i];
    ASSERT_TRUE(a.at == b.at && a.before == b.before && a.after == b.after) << "change " << i;
  }
}

TEST(LockViewStamp, EveryBackendUnderEveryProfileFiresAndTracesAsReadingAlways) {
  SweepPlan plan;
  plan.algorithms = parse_algorithm_list("all", "algorithms");
  plan.profiles = parse_profile_list("all", "profiles");
  plan.base.duration = Duration::seconds(60);
  int runs = 0, waiting_runs = 0, traced_runs = 0;
  size_t changes = 0;
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
        expect_same_trace(skipping.trace, always.trace);
        if (::testing::Test::HasFailure()) return;
        ++runs;
        waiting_runs += always.waits_for_grant ? 1 : 0;
        traced_runs += always.trace.supported ? 1 : 0;
        changes += always.trace.changes.size();
      }
    }
  }
  // The comparison had something to compare: schedules that wait for a
  // grant (about one run in ten: half the crashes and cuts of the profiles
  // that aim at grants).
  EXPECT_EQ(runs, static_cast<int>(kSeedsPerCell * plan.algorithms.size() * plan.profiles.size()));
  EXPECT_GT(waiting_runs, runs / 20);
  // Every backend of the sweep can tell its lock's states, and they move.
  EXPECT_EQ(traced_runs, runs);
  EXPECT_GT(changes, static_cast<size_t>(10 * runs));
}

}  // namespace
}  // namespace locksim::harness
