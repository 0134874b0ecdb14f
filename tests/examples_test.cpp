// The worked example of docs/how-to/add-an-algorithm.md runs: an algorithm
// written outside algorithms/, registered at run time, simulated, checked and
// explained like a built-in one — so the guide cannot rot.
#include <gtest/gtest.h>

#include "algorithms/registry.h"
#include "checkers/explain.h"
#include "examples/check_then_delete.h"
#include "faults/fault_schedule.h"
#include "harness/explain_run.h"
#include "harness/run.h"

namespace {

using locksim::Duration;
using locksim::harness::RunConfig;

void register_once() {
  if (locksim::algorithms::find_algorithm("check-then-delete") == nullptr)
    locksim::algorithms::register_algorithm(locksim::examples::check_then_delete_spec());
}

RunConfig config(uint64_t seed) {
  register_once();
  RunConfig c;
  c.algorithm = "check-then-delete";
  c.seed = seed;
  c.duration = Duration::seconds(30);
  c.algorithm_params = {{"ttl", "5s"}};
  return c;
}

locksim::harness::RunResult run(const RunConfig& c) {
  locksim::harness::RunExtras extras;
  extras.trace_lock = true;
  return locksim::harness::simulate_and_check(c, extras).result;
}

TEST(WorkedExample, RegistersBesideTheBuiltInAlgorithms) {
  register_once();
  const auto* spec = locksim::algorithms::find_algorithm("check-then-delete");
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->backend, "redis");
  EXPECT_EQ(&locksim::algorithms::all_algorithms().back(), spec);
  EXPECT_NE(locksim::algorithms::algorithm_names().find("check-then-delete"), std::string::npos);
}

TEST(WorkedExample, IsSafeWithoutFaults) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const auto r = run(config(seed));
    EXPECT_EQ(locksim::harness::overall_verdict(r), locksim::checkers::Validity::kValid) << seed;
    EXPECT_GT(r.acquisitions, 5) << seed;
  }
}

// Paused past its TTL, the holder's lock is taken: the same story as every
// TTL lock's, told from the records.
TEST(WorkedExample, BreaksUnderAPauseAndExplainSaysWhy) {
  RunConfig c = config(1);
  c.faults.events.push_back(locksim::faults::parse_fault("pause @holder at 2s for 12s", "--fault"));
  const auto r = run(c);
  EXPECT_EQ(r.mutex.kind, locksim::checkers::Validity::kInvalid);
  const auto story = locksim::harness::explain_result(r);
  EXPECT_EQ(story.mechanism, locksim::checkers::Mechanism::kPauseOutlastedLease)
      << locksim::checkers::format_story(story);
}

// Its own flaw: a pause between the release's GET and DEL lets the key
// expire and change hands; the DEL then deletes the next holder's lock.
TEST(WorkedExample, ItsReleaseDeletesTheNextHoldersLock) {
  RunConfig c = config(1);
  c.algorithm_params["check-delay"] = "6s";
  const auto r = run(c);
  ASSERT_EQ(r.mutex.kind, locksim::checkers::Validity::kInvalid);
  const auto story = locksim::harness::explain_result(r);
  bool late_release = false;
  for (const auto m : story.mechanisms)
    late_release |= m == locksim::checkers::Mechanism::kLateRelease;
  EXPECT_TRUE(late_release) << locksim::checkers::format_story(story);
}

}  // namespace
