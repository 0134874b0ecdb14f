// Fencing tokens and the guarded resource: the shipped scenarios give their
// results for the reasons their descriptions give, fenced runs stay
// consistent over 1,000 seeds of holder pauses and partitions, and a lost
// token counter (failover) is caught.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/run.h"
#include "harness/scenario.h"
#include "sim/rng.h"
#include "tests/locksim_binary.h"

namespace locksim::harness {
namespace {

SimRunReport run(const std::string& name) {
  return simulate_and_check(load_scenario(name).config);
}

TEST(Fencing, GcPauseBreaksMutualExclusionButTheFencedRegisterStaysConsistent) {
  const SimRunReport r = run("set-nx-lua-gc-pause-fenced");
  EXPECT_EQ(r.result.mutex.kind, checkers::Verdict::Kind::kInvalid);
  const checkers::ConsequenceVerdict& v = r.result.consequences;
  EXPECT_TRUE(v.active);
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kValid) << v.explanation;
  // The paused holder's late write was refused by the token check.
  EXPECT_GE(v.rejected, 1) << v.explanation;
  EXPECT_EQ(v.unfenced_accesses, 0);
  // Every acquire handed out a larger token than the one before.
  uint64_t last = 0;
  for (const history::Op& op : r.result.history.ops) {
    if (op.f != history::OpF::kAcquire || op.type != history::OpType::kOk) continue;
    ASSERT_TRUE(op.fence.has_value());
    EXPECT_GT(*op.fence, last);
    last = *op.fence;
  }
}

TEST(Fencing, TheSamePauseWithoutFencingAcceptsTheStaleWrite) {
  Scenario s = load_scenario("set-nx-lua-gc-pause-fenced");
  s.config.workload.store.fencing = Fencing::kNone;
  const SimRunReport r = simulate_and_check(s.config);
  EXPECT_EQ(r.result.consequences.kind, checkers::Verdict::Kind::kInvalid);
  EXPECT_FALSE(r.result.consequences.stale_writes.empty());
}

TEST(Fencing, FailoverLosesTheTokenCounterWithTheLock) {
  const SimRunReport r = run("set-nx-lua-failover-fenced");
  EXPECT_EQ(r.result.mutex.kind, checkers::Verdict::Kind::kInvalid);
  const checkers::ConsequenceVerdict& v = r.result.consequences;
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kInvalid);
  ASSERT_FALSE(v.stale_writes.empty()) << v.explanation;
  // The stale write carried a token no lower than the newer holder's: the
  // counter had been reset by the failover, so the check could not see it.
  const checkers::StaleWrite& s = v.stale_writes.front();
  ASSERT_TRUE(s.write.fence && s.newer.fence);
  EXPECT_GE(*s.write.fence, *s.newer.fence);
  EXPECT_GE(v.lost_increments, 1);
  EXPECT_STREQ(checkers::finding(r.result.checks), "safety");
}

TEST(Fencing, AWriteOnlyCheckLetsAStaleReadThrough) {
  const SimRunReport r = run("set-nx-lua-fenced-stale-read");
  const checkers::ConsequenceVerdict& v = r.result.consequences;
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kInvalid) << v.explanation;
  EXPECT_GE(v.lost_increments, 1) << v.explanation;
  // Checking reads too closes the hole: the late write is refused.
  Scenario s = load_scenario("set-nx-lua-fenced-stale-read");
  s.config.workload.store.fencing = Fencing::kReadWriteCheck;
  const SimRunReport checked = simulate_and_check(s.config);
  EXPECT_EQ(checked.result.consequences.kind, checkers::Verdict::Kind::kValid)
      << checked.result.consequences.explanation;
  EXPECT_GE(checked.result.consequences.rejected, 1);
}

TEST(Fencing, InventoryOversellFourteenOfTen) {
  const SimRunReport r = run("inventory-oversell");
  const checkers::ConsequenceVerdict& v = r.result.consequences;
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kInvalid);
  EXPECT_EQ(v.items, 10);
  EXPECT_EQ(v.sold, 14) << v.explanation;
  EXPECT_EQ(v.oversold, 4);
  EXPECT_EQ(v.oversales.size(), 4u);
}

TEST(Fencing, RedlockSaysItHasNoFencingToken) {
  RunConfig c;
  c.algorithm = "redlock";
  c.duration = Duration::seconds(10);
  c.workload.store.workload = Workload::kRegister;
  c.workload.store.fencing = Fencing::kWriteCheck;
  const SimRunReport r = simulate_and_check(c);
  EXPECT_GT(r.result.consequences.unfenced_accesses, 0);
  EXPECT_NE(checkers::fencing_note(r.result.consequences).find("no fencing token"), std::string::npos);
}

// The MySQL lock's Fcount and the ZooKeeper node's czxid are fencing tokens
// too: every access carries one, and a fault-free run stays consistent.
TEST(Fencing, MysqlAndZooKeeperHandOutTokens) {
  for (const char* algorithm : {"mysql-center", "mysql-v1", "zk-recipe", "zk-curator"}) {
    RunConfig c;
    c.algorithm = algorithm;
    c.duration = Duration::seconds(15);
    c.workload.store.workload = Workload::kCounter;
    c.workload.store.fencing = Fencing::kReadWriteCheck;
    const SimRunReport r = simulate_and_check(c);
    const checkers::ConsequenceVerdict& v = r.result.consequences;
    EXPECT_EQ(v.kind, checkers::Verdict::Kind::kValid) << algorithm << ": " << v.explanation;
    EXPECT_EQ(v.unfenced_accesses, 0) << algorithm;
    EXPECT_EQ(v.rejected, 0) << algorithm;
    EXPECT_GE(v.writes_accepted, 3) << algorithm;
    EXPECT_EQ(v.final_value, v.writes_accepted) << algorithm;
  }
}

// Seeded per-seed faults: a pause of whoever holds, and a partition of a
// client from the lock's server or from the store.
RunConfig swarm_config(uint64_t seed, bool failover) {
  sim::Rng rng(seed);
  RunConfig c;
  c.algorithm = "set-nx-lua-fenced";
  c.algorithm_params["ttl"] = "2s";
  c.seed = seed;
  c.duration = Duration::seconds(12);
  c.workload.clients = 3;
  c.workload.hold_min = Duration::millis(500);
  c.workload.hold_max = Duration::millis(1500);
  // Under failover, a counter: a read-modify-write shows a repeated token best.
  c.workload.store.workload = failover ? Workload::kCounter : Workload::kRegister;
  c.workload.store.fencing = Fencing::kWriteCheck;
  const auto between = [&rng](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng.next() % static_cast<uint64_t>(hi - lo + 1));
  };
  const std::string client = "c" + std::to_string(between(1, 3));
  const std::string target = between(0, 1) == 0 ? "redis-1" : "store";
  for (const std::string& f :
       {"pause @holder at " + std::to_string(between(500, 6000)) + "ms for " +
            std::to_string(between(500, 5000)) + "ms",
        "partition " + client + "|" + target + " at " + std::to_string(between(500, 8000)) +
            "ms for " + std::to_string(between(500, 4000)) + "ms"}) {
    c.faults.events.push_back(faults::parse_fault(f, "test"));
  }
  if (failover) {
    c.redis.replicas = 1;
    c.redis.failover = true;
    c.redis.replication_lag = Duration::millis(200);
    c.redis.down_after = Duration::seconds(1);
    c.redis.discovery_delay = Duration::millis(200);
    c.faults.events.push_back(faults::parse_fault(
        "crash redis-1 at " + std::to_string(between(100, 3000)) + "ms", "test"));
  }
  return c;
}

TEST(Fencing, WriteCheckedRegisterStaysConsistentOver1000SeedsOfPausesAndPartitions) {
  int violations = 0;
  int64_t rejected = 0;
  for (uint64_t seed = 1; seed <= 1000; ++seed) {
    const SimRunReport r = simulate_and_check(swarm_config(seed, false));
    ASSERT_TRUE(r.result.errors.empty()) << "seed " << seed << ": " << r.result.errors.front();
    ASSERT_EQ(r.result.consequences.kind, checkers::Verdict::Kind::kValid)
        << "seed " << seed << ": " << r.result.consequences.explanation
        << "\nreplay: " << r.result.replay_command;
    violations += r.result.mutex.kind == checkers::Verdict::Kind::kInvalid ? 1 : 0;
    rejected += r.result.consequences.rejected;
  }
  // Not vacuous: the faults broke mutual exclusion, and fencing stopped the damage.
  EXPECT_GT(violations, 100);
  EXPECT_GT(rejected, 100);
  ::testing::Test::RecordProperty("mutex_violations", violations);
  ::testing::Test::RecordProperty("rejected", std::to_string(rejected));
}

TEST(Fencing, FailoverLosingTheCounterIsCaughtAcrossSeeds) {
  int caught = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const SimRunReport r = simulate_and_check(swarm_config(seed, true));
    ASSERT_TRUE(r.result.errors.empty()) << "seed " << seed << ": " << r.result.errors.front();
    // The lost counter's signature: a stale write accepted with a token no
    // lower than the newer lease's (a repeated token), not a stale read
    // slipping past the write-only check (a lower token).
    bool repeated = false;
    for (const checkers::StaleWrite& w : r.result.consequences.stale_writes) {
      repeated = repeated || (w.write.fence && w.newer.fence && *w.write.fence >= *w.newer.fence);
    }
    caught += repeated ? 1 : 0;
  }
  EXPECT_GT(caught, 0);
  ::testing::Test::RecordProperty("caught", caught);
}

// --- What a user sees: exit codes, the summary, result.json. ---

using locksim::testing::locksim;

TEST(FencingCli, BadResourceInputExitsTwoNamingTheField) {
  struct Case {
    std::string args;
    std::string error;
  };
  for (const Case& c : {
           Case{"--workload bank",
                "--workload: expected one of none, register, counter, "
                "inventory, got 'bank'"},
           Case{"--workload register --fencing read",
                "--fencing: expected one of none, write-check, read-write-check, got 'read'"},
           Case{"--workload inventory --items -3",
                "--items: expected a whole number from 0 to 1000000000, got '-3'"},
       }) {
    const auto o = locksim("run --quiet " + c.args);
    EXPECT_EQ(o.exit_code, 2) << c.args;
    EXPECT_NE(o.err.find(c.error), std::string::npos) << o.err;
  }
  const auto dir = std::filesystem::temp_directory_path() / "locksim_fencing_bad";
  std::filesystem::create_directories(dir);
  const auto file = dir / "bad.json";
  std::ofstream(file) << R"({"algorithm": "set-nx-lua", "resource": {"items": -1}})";
  const auto o = locksim("run --quiet --scenario " + file.string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("bad.json: resource.items: expected a whole number"), std::string::npos)
      << o.err;
  std::filesystem::remove_all(dir);
}

TEST(FencingCli, ResultJsonAndSummaryCarryConsequencesAndExposure) {
  const auto dir = std::filesystem::temp_directory_path() / "locksim_fencing_out";
  const auto o = locksim("run --scenario inventory-oversell --out " + dir.string());
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.out.find("Oversold: 14 items sold of 10"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("exposure: "), std::string::npos) << o.out;
  const auto j = nlohmann::json::parse(locksim::testing::slurp(dir / "result.json"));
  EXPECT_EQ(j["consequences"]["verdict"], "invalid");
  EXPECT_EQ(j["consequences"]["sold"], 14);
  EXPECT_EQ(j["consequences"]["oversale_evidence"].size(), 4u);
  EXPECT_EQ(j["consequences"]["fencing_token"], "none");
  EXPECT_GT(j["exposure"]["total_ns"].get<int64_t>(), 0);
  EXPECT_FALSE(j["exposure"]["first_window"].is_null());
  std::filesystem::remove_all(dir);
}

TEST(FencingCli, LatentExposureExitsZeroAndSaysSo) {
  const auto dir = std::filesystem::temp_directory_path() / "locksim_fencing_latent";
  const auto o = locksim(
      "run --clients 1 --ttl 2s --duration 10s --fault 'pause @holder at 1s "
      "for 5s' --out " +
      dir.string());
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("exposure (LATENT)"), std::string::npos) << o.out;
  const auto j = nlohmann::json::parse(locksim::testing::slurp(dir / "result.json"));
  EXPECT_EQ(j["finding"], "latent");
  EXPECT_TRUE(j["exposure"]["latent"].get<bool>());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace locksim::harness
