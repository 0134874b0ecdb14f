// A sweep's fault coverage (runs.jsonl's `faults` and `fault_touched`, the
// matrix's faulted_runs and low_coverage) counts every fault op a run
// applied. Delay spikes and losses, two thirds of the partition profile's
// faults, were not counted, and a one-way cut's "A->B" was read as one
// node with its duration as the other: a run under a delay spike alone
// showed 0 faults, and partition cells read low coverage.
#include <gtest/gtest.h>

#include <string>

#include "harness/run.h"
#include "harness/sweep/sweep.h"

namespace locksim::harness {
namespace {

// One client holding 2 s at a time for 10 s: a fault at 1 s on its link
// acts while it holds; the same fault on c2, who never runs, does not.
int64_t faults_touching(const std::string& fault, bool* touched) {
  RunConfig c;
  c.workload.clients = 1;
  c.workload.hold_min = c.workload.hold_max = Duration::seconds(2);
  c.duration = Duration::seconds(10);
  c.faults.events.push_back(faults::parse_fault(fault, "--fault"));
  const SimRunReport r = simulate_and_check(c);
  int64_t applied = 0;
  *touched = fault_touched_holder(r.result.history, &applied);
  return applied;
}

TEST(FaultCoverage, LinkFaultsOfEveryKindCountAndTouchTheHolderOnTheirLink) {
  for (const std::string fault :
       {"delay c1|redis-1 at 1s for 2s by 100ms", "loss c1|redis-1 at 1s 0.5 for 2s",
        "loss c1|redis-1 at 1s 0.5", "partition c1->redis-1 at 1s for 2s",
        "partition redis-1->c1 at 1s", "partition c1|redis-1 at 1s for 2s"}) {
    bool touched = false;
    EXPECT_EQ(faults_touching(fault, &touched), 1) << fault;
    EXPECT_TRUE(touched) << fault;
  }
}

}  // namespace
}  // namespace locksim::harness
