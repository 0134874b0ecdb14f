// The locksim binary as a user and a CI gate see it: exit codes, one-line
// errors, and the files --out writes.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "live/zk_process.h"
#include "tests/locksim_binary.h"
#include "tests/real_servers.h"

namespace {

using locksim::testing::expect_bad_input;
using locksim::testing::locksim;
using locksim::testing::Outcome;
using locksim::testing::slurp;

size_t lines(const std::string& s) {
  return locksim::testing::count_lines(s);
}

TEST(Cli, UnknownAlgorithm) {
  expect_bad_input("run --algorithm paxos-lock", "--algorithm");
}
TEST(Cli, NegativeTtl) {
  expect_bad_input("run --ttl -1", "--ttl");
}
TEST(Cli, ZeroTtl) {
  expect_bad_input("run --ttl 0s", "--ttl");
}
TEST(Cli, BadDurationUnit) {
  expect_bad_input("run --duration 5x", "--duration");
}
TEST(Cli, ZeroClients) {
  expect_bad_input("run --clients 0", "--clients");
}
TEST(Cli, NonNumericSeed) {
  expect_bad_input("run --seed abc", "--seed");
}
TEST(Cli, BackwardsHoldRange) {
  expect_bad_input("run --hold 3s..1s", "--hold");
}
TEST(Cli, UnknownParam) {
  expect_bad_input("run --param colour=blue", "colour");
}
TEST(Cli, FaultOnMissingNode) {
  expect_bad_input("run --fault 'pause c9 at 1s for 1s'", "c9");
}
TEST(Cli, MalformedFault) {
  expect_bad_input("run --fault 'pause c1 sometime'", "--fault");
}
TEST(Cli, UnknownFlag) {
  expect_bad_input("run --colour blue", "colour");
}
TEST(Cli, QuorumLargerThanN) {
  expect_bad_input("run --algorithm redlock --param quorum=6", "--param quorum");
}
TEST(Cli, QuorumLargerThanNFromMasters) {
  expect_bad_input("run --algorithm redlock --masters 3 --param quorum=4", "quorum");
}
// Below 1 the built-in said "1 to 1000" and the lock file "1 to 1000" without
// 'auto', where a number past N says "1 to the 5 redis servers".
TEST(Cli, QuorumBelowOneSaysTheRangeAsTheServerCheckDoes) {
  for (const char* algorithm : {"redlock", "script:examples/scripts/redlock.json"}) {
    expect_bad_input(std::string("run --algorithm ") + algorithm + " --param quorum=0",
                     "--param quorum: expected 'auto' or a whole number from 1 to the number of "
                     "redis servers, got '0'");
  }
}
TEST(Cli, DriftFactorOutsideUnitInterval) {
  expect_bad_input("run --algorithm redlock --param drift-factor=1.5", "--param drift-factor");
  expect_bad_input("run --algorithm redlock --param drift-factor=-0.1", "--param drift-factor");
}
TEST(Cli, UnknownPersistence) {
  expect_bad_input("run --persistence fsync", "--persistence");
}
TEST(Cli, FailoverWithoutReplicas) {
  expect_bad_input("run --failover", "failover");
}
TEST(Cli, FaultOnMissingServer) {
  expect_bad_input("run --fault 'crash redis-2 at 1s'", "redis-2");
}
TEST(Cli, UnknownScenario) {
  expect_bad_input("run --scenario no-such-thing", "--scenario");
}
TEST(Cli, ScenarioWithConflictingFlag) {
  expect_bad_input("run --scenario set-nx-lua-gc-pause --ttl 3s", "--ttl");
}
TEST(Cli, BadScenarioFileNamesPathAndField) {
  const auto path = std::filesystem::temp_directory_path() / "locksim_bad_scenario.json";
  {
    std::ofstream out(path);
    out << R"({"algorithm": "redlock", "redis": {"masters": 5, "replicas": 1, "timeout": "-5ms"}})";
  }
  expect_bad_input("run --scenario " + path.string(), path.string() + ": redis.timeout");
  std::filesystem::remove(path);
}

TEST(Cli, ScenarioRunsAndSaysWhatKindOfFinding) {
  const Outcome violation = locksim("run --scenario set-nx-lua-clock-jump");
  EXPECT_EQ(violation.exit_code, 1) << violation.out << violation.err;
  EXPECT_EQ(violation.out.rfind("VIOLATION", 0), 0u) << violation.out;
  EXPECT_NE(violation.out.find("replay: locksim run --scenario set-nx-lua-clock-jump --seed 1"),
            std::string::npos)
      << violation.out;
  const Outcome stuck = locksim("run --scenario naive-setnx-crash-between");
  EXPECT_EQ(stuck.exit_code, 1) << stuck.out << stuck.err;
  EXPECT_EQ(stuck.out.rfind("LIVENESS", 0), 0u) << stuck.out;
  const Outcome safe = locksim("run --scenario set-nx-lua-restart-fsync-always");
  EXPECT_EQ(safe.exit_code, 0) << safe.out << safe.err;
}

TEST(Cli, ResultJsonSaysSafetyOrLiveness) {
  const auto dir = std::filesystem::temp_directory_path() / "locksim_cli_liveness";
  std::filesystem::remove_all(dir);
  const Outcome o =
      locksim("run --scenario naive-setnx-crash-between --quiet --out " + dir.string());
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_TRUE(o.out.empty()) << "--quiet prints nothing";
  const auto result = nlohmann::json::parse(slurp(dir / "result.json"));
  EXPECT_EQ(result["finding"], "liveness");
  EXPECT_EQ(result["liveness"]["stuck"], true);
  EXPECT_EQ(result["safety"]["verdict"], "valid");
  std::filesystem::remove_all(dir);
}

TEST(Cli, ListShowsScenarios) {
  const Outcome o = locksim("list");
  for (const char* name :
       {"naive-setnx-crash-between", "redlock-node-restart", "getset-clock-skew"}) {
    EXPECT_NE(o.out.find(name), std::string::npos) << name;
  }
}

// The same algorithm code against real redis-server processes started by
// the harness: clean when used correctly, a violation when holds outlast the TTL.
TEST(Cli, LiveRunAgainstRealRedis) {
  const Outcome clean = locksim("live --duration 2s --ttl 2s --clients 3");
  EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
  EXPECT_NE(clean.out.find("OK: no mutual-exclusion violation"), std::string::npos) << clean.out;
  const Outcome broken = locksim("live --duration 2s --ttl 200ms --hold 300ms..400ms --clients 3");
  EXPECT_EQ(broken.exit_code, 1) << broken.out << broken.err;
  EXPECT_NE(broken.out.find("VIOLATION"), std::string::npos) << broken.out;
}
TEST(Cli, LiveBadInputIsOneLine) {
  expect_bad_input("live --duration 1s --param ttl=5x", "--ttl");
  // What live cannot apply (a link between two clients, a node the run
  // lacks, a clock fault on mariadbd).
  expect_bad_input("live --fault 'partition c1|c2 at 1s'", "--fault");
  expect_bad_input("live --fault 'crash redis-7 at 1s'", "--fault");
  expect_bad_input("live --algorithm mysql-center --fault 'jump mysql-1 at 1s +5s'", "--fault");
}

// ZooKeeper: the three variants are listed and run; bad ensemble settings
// and faults on servers that do not exist are one-line errors naming the field.
TEST(Cli, ZooKeeperVariantsAreListed) {
  const Outcome o = locksim("list");
  EXPECT_EQ(o.exit_code, 0);
  for (const char* name : {"zk-recipe", "zk-curator", "zk-herd", "zk-curator-partition",
                           "zk-recipe-lost-create-reply"}) {
    EXPECT_NE(o.out.find(name), std::string::npos) << name;
  }
}
TEST(Cli, ZooKeeperBadInput) {
  expect_bad_input("run --algorithm zk-curator --session-timeout 0s", "--session-timeout");
  expect_bad_input("run --algorithm zk-curator --session-timeout -5s", "--session-timeout");
  expect_bad_input("run --algorithm zk-curator --zk-servers 2", "--zk-servers");
  expect_bad_input("run --algorithm zk-curator --zk-servers 0", "--zk-servers");
  expect_bad_input("run --algorithm zk-curator --fault 'crash zk-4 at 1s'", "zk-4");
  expect_bad_input("run --algorithm zk-curator --zk-servers 1 --fault 'crash zk-3 at 1s'", "zk-3");
  expect_bad_input("run --algorithm zk-herd --param ttl=1s", "ttl");
}
TEST(Cli, ZooKeeperRunReportsTheNegotiatedTimeout) {
  const auto dir = std::filesystem::temp_directory_path() / "locksim_cli_zk";
  std::filesystem::remove_all(dir);
  for (const char* algorithm : {"zk-recipe", "zk-curator", "zk-herd"}) {
    // 30s asked with a 1s tick: clamped to 20 ticks.
    const Outcome o =
        locksim(std::string("run --algorithm ") + algorithm +
                " --duration 20s --zk-tick 1s --session-timeout 30s --out " + dir.string());
    EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
    EXPECT_NE(o.out.find("zookeeper.negotiated_session_timeout: 20s (asked 30s"), std::string::npos)
        << o.out;
    const auto result = nlohmann::json::parse(slurp(dir / "result.json"));
    EXPECT_EQ(result["backend"]["zookeeper.negotiated_session_timeout"].get<std::string>().rfind(
                  "20s", 0),
              0u)
        << result["backend"].dump();
    EXPECT_GT(result["counts"]["acquisitions"].get<int>(), 0);
  }
  std::filesystem::remove_all(dir);
}
// A paused holder's expired session: the summary names its last heartbeat
// and the deadline the leader computed from it.
TEST(Cli, ZooKeeperPauseNamesTheDeadlineAndTheLastHeartbeat) {
  const Outcome o = locksim("run --scenario zk-recipe-gc-pause");
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  EXPECT_NE(o.out.find("zookeeper.session_expired[0]"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("last heartbeat heard"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("deadline"), std::string::npos) << o.out;
}

// A waiter that times out while the leader is down must still leave the
// queue (Curator's guaranteed delete): else its node, owned by a live
// session, blocks everyone after the failover. Seeds 3, 4, 5, 9 and 10 were
// stuck before.
TEST(Cli, ZooKeeperCuratorIsNotStuckAfterLeaderFailover) {
  for (int seed = 1; seed <= 10; ++seed) {
    const Outcome o =
        locksim("run --scenario zk-curator-leader-failover --seed " + std::to_string(seed));
    EXPECT_EQ(o.exit_code, 0) << "seed " << seed << "\n" << o.out << o.err;
  }
}

// `live` starts its own ZooKeeper ensemble (one and three JVMs), runs each
// variant through the C client, checks the history and stops every JVM.
TEST(Cli, LiveRunAgainstRealZooKeeper) {
  LOCKSIM_SKIP_WITHOUT("zookeeper", locksim::live::ZkEnsembleProcess::missing());
  for (const char* algorithm : {"zk-recipe", "zk-curator", "zk-herd"}) {
    const std::string servers = std::string(algorithm) == "zk-curator" ? "3" : "1";
    const Outcome o = locksim(std::string("live --algorithm ") + algorithm +
                              " --duration 3s --clients 3 --hold 50ms..150ms --zk-servers " +
                              servers + " --zk-tick 100ms --session-timeout 1s");
    EXPECT_EQ(o.exit_code, 0) << algorithm << "\n" << o.out << o.err;
    EXPECT_NE(o.out.find("OK: no mutual-exclusion violation"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("zookeeper.negotiated_session_timeout: 1s"), std::string::npos) << o.out;
  }
  const Outcome five = locksim("live --algorithm zk-curator --zk-servers 5");
  EXPECT_EQ(five.exit_code, 2) << five.err;
  EXPECT_EQ(lines(five.err), 1u) << five.err;
  EXPECT_NE(five.err.find("--zk-servers"), std::string::npos) << five.err;
}

TEST(Cli, NoSubcommand) {
  const Outcome o = locksim("");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(lines(o.err), 1u) << o.err;
}

TEST(Cli, ListShowsAlgorithmsWithDefaults) {
  const Outcome o = locksim("list");
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_NE(o.out.find("set-nx-lua"), std::string::npos);
  EXPECT_NE(o.out.find("ttl"), std::string::npos);
  EXPECT_NE(o.out.find("10s"), std::string::npos);
}

TEST(Cli, CleanRunExitsZeroAndWritesFiles) {
  const auto dir = std::filesystem::temp_directory_path() / "locksim_cli_clean";
  std::filesystem::remove_all(dir);
  const Outcome o =
      locksim("run --algorithm set-nx-lua --seed 42 --duration 20s --out " + dir.string());
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(o.out.rfind("OK", 0), 0u) << "the verdict comes first:\n" << o.out;
  const auto result = nlohmann::json::parse(slurp(dir / "result.json"));
  EXPECT_EQ(result["verdict"], "valid");
  EXPECT_EQ(result["seed"], 42);
  EXPECT_GT(result["counts"]["acquisitions"].get<int>(), 0);
  const std::string edn = slurp(dir / "history.edn");
  EXPECT_EQ(edn.rfind("{:index 0, :time ", 0), 0u) << edn.substr(0, 200);
  EXPECT_FALSE(slurp(dir / "history.jsonl").empty());
  std::filesystem::remove_all(dir);
}

TEST(Cli, ViolationExitsOneAndReportsThePair) {
  const Outcome o = locksim("run --seed 5 --duration 20s --ttl 1s --hold 2s..3s");
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  EXPECT_EQ(o.out.rfind("VIOLATION", 0), 0u) << o.out;
  EXPECT_NE(o.out.find("both held the lock in ["), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("replay: locksim run"), std::string::npos) << o.out;
}

TEST(Cli, ReplayCommandReproducesTheRun) {
  const Outcome first =
      locksim("run --seed 9 --duration 15s --ttl 1s --hold 2s..2s --fault 'pause c1 at 2s for 3s'");
  const size_t at = first.out.find("replay: ");
  ASSERT_NE(at, std::string::npos) << first.out;
  std::string replay = first.out.substr(at + 8);
  replay = replay.substr(0, replay.find('\n'));
  ASSERT_EQ(replay.rfind("locksim ", 0), 0u);
  const Outcome again = locksim(replay.substr(8));
  EXPECT_EQ(again.exit_code, first.exit_code);
  EXPECT_EQ(again.out, first.out);
}

}  // namespace
