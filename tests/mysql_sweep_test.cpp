// The MySQL lock table's safe configurations stay clean over many seeds:
// 1,000 fault-free seeds for each version (v1's deadlocks are not
// violations), and the settings the literature calls safe under a seeded
// crash — semi-synchronous failover, flush_log_at_trx_commit=1 — each with
// the crash's time and length drawn per seed.
#include <gtest/gtest.h>

#include <string>

#include "clean_sweep.h"
#include "harness/run.h"
#include "sim/rng.h"

namespace locksim::harness {
namespace {

using testing::crash_fault;

// `make` over `seeds` seeds; the deadlocks seen.
template <class Make>
int64_t expect_clean(uint64_t seeds, Make make) {
  return testing::expect_clean(seeds, make).deadlocks;
}

RunConfig fault_free(const char* algorithm, uint64_t seed) {
  RunConfig c;
  c.algorithm = algorithm;
  c.seed = seed;
  c.duration = Duration::seconds(10);
  c.workload.clients = 3;
  c.algorithm_params["ttl"] = "5s";
  c.mysql.client_timeout = Duration::seconds(5);
  return c;
}

TEST(MysqlSweep, ThousandFaultFreeSeedsPerVersion) {
  for (const char* algorithm : {"mysql-v1", "mysql-center", "mysql-segmented"}) {
    SCOPED_TRACE(algorithm);
    expect_clean(1000, [algorithm](uint64_t seed) { return fault_free(algorithm, seed); });
  }
}

TEST(MysqlSweep, V1DeadlocksAreCountedNotViolations) {
  // v1 with the row deleted at each release: every hand-over races on a
  // missing row, so deadlocks are common, and all of them are harmless.
  const int64_t deadlocks = expect_clean(100, [](uint64_t seed) {
    RunConfig c = fault_free("mysql-v1", seed);
    c.algorithm_params["release"] = "delete";
    c.algorithm_params["retry"] = "5ms..10ms";
    c.algorithm_params["max-attempts"] = "100";
    c.workload.clients = 5;
    c.workload.hold_min = Duration::millis(200);
    c.workload.hold_max = Duration::millis(500);
    return c;
  });
  EXPECT_GT(deadlocks, 100);
}

TEST(MysqlSweep, SemiSyncFailoverIsSafeWhereverTheCrashFalls) {
  expect_clean(200, [](uint64_t seed) {
    RunConfig c = fault_free("mysql-center", seed);
    c.duration = Duration::seconds(20);
    c.mysql.replicas = 1;
    c.mysql.replication_lag = Duration::millis(100);
    c.mysql.semi_sync = true;
    c.mysql.failover = true;
    c.mysql.down_after = Duration::seconds(2);
    c.mysql.discovery_delay = Duration::millis(500);
    c.mysql.client_timeout = Duration::seconds(2);
    sim::Rng rng(seed);
    c.faults.events.push_back(
        crash_fault("mysql-1", Duration::millis(rng.between(0, 5000)), Duration::zero()));
    return c;
  });
}

TEST(MysqlSweep, DurableCrashRestartIsSafeWhereverTheCrashFalls) {
  expect_clean(200, [](uint64_t seed) {
    RunConfig c = fault_free("mysql-center", seed);
    c.duration = Duration::seconds(20);
    c.mysql.flush_log_at_trx_commit = 1;
    c.mysql.client_timeout = Duration::seconds(2);
    sim::Rng rng(seed);
    const Duration at = Duration::millis(rng.between(0, 5000));
    c.faults.events.push_back(crash_fault("mysql-1", at, Duration::millis(rng.between(100, 3000))));
    return c;
  });
}

}  // namespace
}  // namespace locksim::harness
