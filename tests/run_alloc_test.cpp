// What a whole lock run allocates per simulated event once it is under way,
// for the four algorithms the engine's speed is measured with (issue 30,
// docs/measurements.md "Engine speed"). The engine itself allocates nothing
// per event (steady_state_alloc_test.cpp); what is left is the models' own
// data: a MySQL statement's request and result rows, a ZooKeeper request,
// reply and tree node. Each ceiling is the measured figure plus a margin, so
// a change that puts an allocation back on a hot path (a copied request, a
// std::function where a Callback fits, a map node made per lock) fails here
// instead of showing up only as a slower benchmark. A count, never a time.
//
// This binary counts allocations with tests/counting_new.h's operator new.
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <string>

#include "harness/simulation.h"
#include "tests/counting_new.h"

namespace locksim::harness {
namespace {

struct Counted {
  uint64_t allocations = 0;
  uint64_t events = 0;
};

// One run of the benchmarks' shape (bench/five_client_run.h): five clients,
// default parameters and no faults, `seconds` of virtual time.
Counted count_run(const std::string& algorithm, int seconds) {
  RunConfig c;
  c.algorithm = algorithm;
  c.seed = 1;
  c.duration = Duration::seconds(seconds);
  c.workload.clients = 5;
  const PreparedRun prepared = prepare_run(c);
  const uint64_t before = test_alloc::t_allocations;
  const SimOutput out = run_simulation(prepared);
  return Counted{test_alloc::t_allocations - before, out.events};
}

// Allocations per event of the part a longer run adds: start-up (servers,
// fibers, Lua states, the first sessions) and the end (the history, the
// fibers' unwinding) are the same in both runs and cancel out.
double allocations_per_event(const std::string& algorithm) {
  const Counted short_run = count_run(algorithm, 10);
  const Counted long_run = count_run(algorithm, 40);
  // Pair of the division: the longer run did run more events.
  EXPECT_GT(long_run.events, short_run.events + 500) << algorithm;
  const double rate = static_cast<double>(long_run.allocations - short_run.allocations) /
                      static_cast<double>(long_run.events - short_run.events);
  std::cout << algorithm << ": " << rate << " allocations an event ("
            << long_run.events - short_run.events << " events)\n";
  return rate;
}

// Measured 2026-11-28 (gcc 12): 0.10, 0.28, 0.17, 1.96. The ZooKeeper
// figure was 2.94 until the lock stopped making its three parent nodes on
// every acquire (as Curator does not): a third fewer events, each a quorum
// message that allocated less than the average, so 3.84 an event but about
// a sixth fewer for the same stretch of run. Then part 13 of issue 30
// (docs/measurements.md) pooled a MySQL statement's text, its SELECT's
// columns and rows and its timeout's handle (1.42 -> 0.17), and the
// ZooKeeper tree's deleted entries, getChildren's names, a message's box on
// its ordered pipe and an apply's result (3.84 -> 1.96). Part 14: a boxed
// Callback's block from the thread's free list, the history's ops moved
// instead of copied, a ZooKeeper request shared by its client, server and
// forward instead of copied twice, the proposal log's map nodes kept, and a
// follower's touched sessions in a vector, a script's GET value pooled:
// 0.041, 0.091, 0.154, 0.75.
TEST(RunAllocations, RedisLocksAllocateAlmostNothingPerEvent) {
  EXPECT_LT(allocations_per_event("set-nx-lua"), 0.1);
  EXPECT_LT(allocations_per_event("redlock"), 0.15);
}

TEST(RunAllocations, MysqlAndZooKeeperModelsStayUnderTheirCeilings) {
  EXPECT_LT(allocations_per_event("mysql-center"), 0.25);
  EXPECT_LT(allocations_per_event("zk-curator"), 1.0);
}

TEST(RunAllocations, TheCounterSeesAnAllocation) {
  EXPECT_TRUE(test_alloc::counter_sees_an_allocation());
}

}  // namespace
}  // namespace locksim::harness
