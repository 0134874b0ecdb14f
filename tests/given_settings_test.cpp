// Settings the user gave (RunConfig::given_paths), through the real binary:
// a fault profile that would replace one, or a setting whose parent is off
// (read by nothing), is refused on one line with exit 2; a given value the
// profile keeps, and the replay command of a profile run, which carries the
// deployed values, still run, byte for byte the same.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "env/parse.h"
#include "faults/profile.h"
#include "harness/setting_rows.h"
#include "tests/locksim_binary.h"

namespace {

namespace fs = std::filesystem;
using locksim::testing::expect_bad_input;
using locksim::testing::locksim;
using locksim::testing::Outcome;
using locksim::testing::slurp;

const locksim::testing::ScratchDir scratch_dir("locksim_given_settings_");

// A short run: given settings are checked before it starts, so its length
// matters only to the runs that are accepted.
const std::string kShort = " --duration 5s --quiet";

void expect_runs(const std::string& args) {
  const Outcome o = locksim(args + kShort);
  EXPECT_TRUE(o.exit_code == 0 || o.exit_code == 1) << args << "\n" << o.err;
}

std::string lag_of_seed(uint64_t seed) {
  return locksim::format_duration(locksim::faults::profile_replication_lag(seed));
}

std::string timeout_of_seed(uint64_t seed) {
  const auto t = locksim::faults::profile_client_timeout({"partition"}, seed);
  return locksim::harness::timeout_text(t.value());
}

// --down-after 5s --profile failover ran with the profile's 1 s.
TEST(GivenSettings, FailoverProfileRefusesAMonitorSlowerThanItNeeds) {
  expect_bad_input("run --down-after 5s --profile failover",
                   "--down-after 5s: --profile failover needs at most 1s so the failover lands "
                   "inside a holder's critical section; leave --down-after out, or give a "
                   "failover with --fault instead");
  expect_bad_input("run --discovery-delay 1s --profile pause+failover",
                   "--discovery-delay 1s: --profile pause+failover needs at most 200ms");
  expect_bad_input("run --algorithm mysql-center --mysql-down-after 2s --profile failover",
                   "--mysql-down-after 2s: --profile failover needs at most 1s");
  // Within the bound, or the bound itself: the profile keeps it.
  expect_runs("run --down-after 500ms --profile failover");
  expect_runs("run --down-after 1s --discovery-delay 200ms --profile failover");
}

// --replication-lag 10ms --profile failover ran with the seed's lag.
TEST(GivenSettings, FailoverProfileRefusesALagBelowTheSeedsDraw) {
  const std::string lag = lag_of_seed(4);
  expect_bad_input("run --replication-lag 10ms --profile failover --seed 4",
                   "--replication-lag 10ms: --profile failover needs at least " + lag +
                       " (seed 4's draw), so a write acknowledged just before the crash can "
                       "miss the replica; leave --replication-lag out, or give at least " +
                       lag);
  expect_bad_input("run --algorithm mysql-center --mysql-replication-lag 1ms --profile failover",
                   "--mysql-replication-lag 1ms: --profile failover needs at least");
  expect_bad_input("run --replicas 0 --profile failover",
                   "--replicas 0: --profile failover needs at least 1, a replica to promote");
  // The seed's own lag, or more: kept.
  expect_runs("run --replication-lag " + lag + " --profile failover --seed 4");
  expect_runs("run --replication-lag 3s --replicas 2 --profile failover --seed 4");
}

// --timeout and --mysql-timeout were replaced by the partition profile's draw.
TEST(GivenSettings, PartitionProfileRefusesAClientTimeoutOtherThanTheSeedsDraw) {
  // 5 s is not among the draws (none, 500 ms, 2 s, 3 s, 60 s).
  expect_bad_input("run --timeout 5s --profile partition --seed 3",
                   "--timeout 5s: --profile partition needs the client timeout seed 3 draws (" +
                       timeout_of_seed(3) +
                       ") so its cuts meet clients that give up and clients that wait; leave "
                       "--timeout out, or give a partition with --fault instead");
  expect_bad_input("run --algorithm mysql-center --mysql-timeout 5s --profile pause+partition",
                   "--mysql-timeout 5s: --profile pause+partition needs the client timeout");
  expect_runs("run --timeout " + timeout_of_seed(3) + " --profile partition --seed 3");
  // ZooKeeper's clients have no such timeout: nothing to replace.
  expect_runs("run --algorithm zk-recipe --session-timeout 6s --profile partition");
}

// A scenario file names the field by its path, as every error there does.
TEST(GivenSettings, AScenarioFieldTheProfileWouldReplaceIsNamedByItsPath) {
  const fs::path file = scratch_dir.write(
      "failover_down_after.json",
      R"({"algorithm": "set-nx-lua", "profile": "failover", "redis": {"down_after": "5s"}})");
  expect_bad_input("run --scenario " + file.string(),
                   file.string() +
                       ": redis.down_after 5s: profile failover needs at most 1s so the failover "
                       "lands inside a holder's critical section; leave redis.down_after out, or "
                       "give a failover with faults instead");
}

// Runs `args` into DIR/a, then its printed replay into DIR/b: the replay is
// accepted, ends the same and writes the same history. Returns the replay.
std::string expect_replay_is_the_same(const std::string& args, const std::string& name) {
  const fs::path dir = scratch_dir.path() / name;
  const Outcome first = locksim(args + " --quiet --out " + (dir / "a").string());
  EXPECT_TRUE(first.exit_code == 0 || first.exit_code == 1) << args << "\n" << first.err;
  const nlohmann::json result = nlohmann::json::parse(slurp(dir / "a" / "result.json"));
  const std::string replay = result.at("replay").get<std::string>();
  EXPECT_EQ(replay.rfind("locksim run ", 0), 0u) << replay;
  const Outcome again = locksim(replay.substr(std::string("locksim ").size()) + " --quiet --out " +
                                (dir / "b").string());
  EXPECT_EQ(again.exit_code, first.exit_code) << replay << "\n" << again.err;
  EXPECT_EQ(slurp(dir / "b" / "history.jsonl"), slurp(dir / "a" / "history.jsonl")) << replay;
  EXPECT_FALSE(slurp(dir / "a" / "history.jsonl").empty()) << args;
  return replay;
}

// `text` with its first `from` replaced by `to`; `from` must be there.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from << " in " << text;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

// A profile run's replay carries the deployed values (a failover profile's
// replica, lag and monitor; a partition profile's timeout) as given
// settings: the profile keeps each, so the replay runs and is the same run.
TEST(GivenSettings, TheReplayOfAFailoverProfileRunIsAcceptedAndTheSameRun) {
  for (const char* algorithm : {"set-nx-lua", "mysql-center"}) {
    for (const char* profile : {"failover", "pause+failover"}) {
      const std::string args = std::string("run --algorithm ") + algorithm + " --profile " +
                               profile + " --seed 3 --duration 10s";
      const std::string name = std::string(algorithm) + "_" + (profile[0] == 'p' ? "pf" : "f");
      const std::string replay = expect_replay_is_the_same(args, name);
      const std::string down =
          std::string(algorithm) == "mysql-center" ? "--mysql-down-after" : "--down-after";
      // The deployed value given, so a slower monitor in its place is refused.
      const std::string slower = replaced(replay, down + " 1s", down + " 2s");
      expect_bad_input(slower.substr(std::string("locksim ").size()), down + " 2s: --profile");
    }
  }
}

TEST(GivenSettings, TheReplayOfAPartitionProfileRunIsAcceptedAndTheSameRun) {
  // Seeds whose draw is not Redis's default (500 ms), so the replay says it.
  int said = 0;
  for (uint64_t seed = 1; seed <= 12 && said < 2; ++seed) {
    const std::string drawn = timeout_of_seed(seed);
    if (drawn == "500ms") continue;
    ++said;
    const std::string args =
        "run --algorithm set-nx-lua --profile partition --seed " + std::to_string(seed);
    const std::string replay = expect_replay_is_the_same(args, "partition_" + std::to_string(seed));
    const std::string other = drawn == "3s" ? "2s" : "3s";
    const std::string changed = replaced(replay, "--timeout " + drawn, "--timeout " + other);
    expect_bad_input(changed.substr(std::string("locksim ").size()),
                     "--timeout " + other + ": --profile partition");
  }
  EXPECT_EQ(said, 2);
  expect_replay_is_the_same("run --algorithm mysql-center --profile partition --seed 2",
                            "partition_mysql");
}

// Each pair of harness/setting_needs.h: the setting alone, refused naming
// both; beside its parent, a run.
struct Pair {
  std::string alone;
  std::string message;
  std::string with_parent;
};

// --rdb-interval without --persistence rdb scheduled no snapshot, and so on.
TEST(GivenSettings, ASettingWhoseParentIsOffIsRefused) {
  const std::string mysql = "run --algorithm mysql-center ";
  const std::vector<Pair> pairs = {
      {"run --items 5",
       "--items: only read with --workload inventory (it is none); give that too, or leave "
       "--items out",
       "run --items 5 --workload inventory"},
      {"run --rdb-interval 10s --persistence aof-always",
       "--rdb-interval: only read with --persistence rdb (it is aof-always)",
       "run --rdb-interval 10s --persistence rdb"},
      {"run --down-after 2s",
       "--down-after: only read with --failover, or a --profile with failover (it is off); give "
       "one of them, or leave --down-after out",
       "run --down-after 2s --replicas 1 --failover"},
      {"run --discovery-delay 2s --replicas 1 --profile pause",
       "--discovery-delay: only read with --failover",
       "run --discovery-delay 100ms --profile pause+failover"},
      {"run --replication-lag 20ms",
       "--replication-lag: only read with --replicas 1 or more, or a --profile with failover (it "
       "is 0)",
       "run --replication-lag 2s --profile failover"},
      {mysql + "--semi-sync-timeout 3s --mysql-replicas 1",
       "--semi-sync-timeout: only read with --semi-sync (it is off)",
       mysql + "--semi-sync-timeout 3s --mysql-replicas 1 --semi-sync"},
      {mysql + "--mysql-down-after 2s --mysql-replicas 1",
       "--mysql-down-after: only read with --mysql-failover",
       mysql + "--mysql-down-after 2s --mysql-replicas 1 --mysql-failover"},
      {mysql + "--mysql-discovery-delay 2s", "--mysql-discovery-delay: only read with",
       mysql + "--mysql-discovery-delay 100ms --profile failover"},
      {mysql + "--mysql-replication-lag 20ms",
       "--mysql-replication-lag: only read with --mysql-replicas 1 or more",
       mysql + "--mysql-replication-lag 20ms --mysql-replicas 1"},
  };
  for (const Pair& p : pairs) {
    expect_bad_input(p.alone, p.message);
    expect_runs(p.with_parent);
  }
}

// `locksim live` takes no --profile, so its message offers none; it is
// refused before any server starts.
TEST(GivenSettings, LiveOffersOnlyTheParentItTakes) {
  const std::string err = expect_bad_input(
      "live --down-after 2s",
      "--down-after: only read with --failover (it is off); give that too, or leave --down-after "
      "out");
  EXPECT_EQ(err.find("--profile"), std::string::npos) << err;
}

// A scenario file names both by their paths; a flag's parent by its value.
TEST(GivenSettings, AScenarioSettingWhoseParentIsOffIsNamedByItsPath) {
  const fs::path file = scratch_dir.write(
      "rdb_without_rdb.json", R"({"algorithm": "set-nx-lua", "redis": {"rdb_interval": "10s"}})");
  expect_bad_input("run --scenario " + file.string(),
                   file.string() +
                       ": redis.rdb_interval: only read with redis.persistence rdb (it is none); "
                       "give that too, or leave redis.rdb_interval out");
  const fs::path flag_file = scratch_dir.write(
      "down_after_without_failover.json",
      R"({"algorithm": "set-nx-lua", "redis": {"replicas": 1, "down_after": "2s"}})");
  expect_bad_input("run --scenario " + flag_file.string(),
                   flag_file.string() +
                       ": redis.down_after: only read with redis.failover true, or a profile "
                       "with failover (it is false)");
  // At its default a key asks for nothing: result.json's params, which list
  // every setting, read back as a scenario (QaFaults.AnyRunsParamsReadBack...).
  const fs::path at_default = scratch_dir.write(
      "rdb_interval_at_default.json",
      R"({"algorithm": "set-nx-lua", "duration": "5s", "redis": {"rdb_interval": "1m"}})");
  EXPECT_EQ(locksim("run --quiet --scenario " + at_default.string()).exit_code, 0);
}

// Given is not "off its default": the default typed is refused the same,
// and --time-scale, which moves every duration off its default, gives none.
TEST(GivenSettings, GivenMeansTypedNotOffTheDefault) {
  expect_bad_input("run --items 10", "--items: only read with --workload inventory");
  expect_bad_input("run --down-after 5s", "--down-after: only read with --failover");
  expect_runs("run --algorithm mysql-center --time-scale 2");
  // Scaled, an unread setting would be in the replay, given, and refused.
  const std::string replay =
      expect_replay_is_the_same("run --time-scale 0.5 --duration 10s", "time_scaled");
  EXPECT_EQ(replay.find("--down-after"), std::string::npos) << replay;
  EXPECT_EQ(replay.find("--rdb-interval"), std::string::npos) << replay;
}

// --time-scale: the given values are held to the profile in the units the
// user gave them (the profile's draws do not scale), before scaling.
TEST(GivenSettings, UnderATimeScaleTheProfileReadsTheValuesAsGiven) {
  const std::string lag = lag_of_seed(1);
  // 2 s at 0.1 runs with 200 ms; the check reads the 2 s that was typed.
  expect_runs("run --time-scale 0.1 --replication-lag " + lag + " --profile failover");
  expect_bad_input("run --time-scale 10 --down-after 5s --profile failover",
                   "--down-after 5s: --profile failover needs at most 1s");
  expect_runs("run --time-scale 10 --down-after 500ms --profile failover");
}

// result.json's params of a profile run carry its deployment for its seed:
// read back as a scenario they may be re-seeded and time-scaled, as
// scenarios.md says, and the profile deploys anew.
TEST(GivenSettings, AProfileRunsParamsTakeAnotherSeedOrTimeScale) {
  for (const char* profile : {"failover", "partition"}) {
    const fs::path dir = scratch_dir.path() / (std::string("params_") + profile);
    const Outcome first = locksim(std::string("run --quiet --duration 10s --seed 1 --profile ") +
                                  profile + " --out " + (dir / "a").string());
    ASSERT_TRUE(first.exit_code == 0 || first.exit_code == 1) << first.err;
    const nlohmann::json result = nlohmann::json::parse(slurp(dir / "a" / "result.json"));
    const fs::path file =
        scratch_dir.write(std::string("params_") + profile + ".json", result.at("params").dump());
    for (const char* moved : {" --seed 7", " --time-scale 0.5", " --time-scale 2"}) {
      const Outcome o = locksim("run --quiet --scenario " + file.string() + moved);
      EXPECT_TRUE(o.exit_code == 0 || o.exit_code == 1) << profile << moved << "\n" << o.err;
    }
  }
}

// A profile with failover adds the replica --failover (or --semi-sync) needs.
TEST(GivenSettings, AFailoverProfileGivesTheReplicaAFailoverFlagNeeds) {
  expect_runs("run --failover --profile failover");
  expect_runs("run --algorithm mysql-center --mysql-failover --profile pause+failover");
  expect_runs("run --algorithm mysql-center --semi-sync --profile failover");
  expect_bad_input("run --failover", "--failover: needs --replicas >= 1");
  // A file names the replicas by their path alone after naming itself once.
  const fs::path file =
      scratch_dir.write("failover_without_replica.json",
                        R"({"algorithm": "set-nx-lua", "redis": {"failover": true}})");
  expect_bad_input("run --scenario " + file.string(),
                   file.string() + ": redis.failover: needs redis.replicas >= 1");
}

// Another backend's flag is refused when typed, even at its default; in a
// file a default value is no setting (a file may carry every section).
TEST(GivenSettings, AnotherBackendsFlagIsRefusedWhenTyped) {
  expect_bad_input("run --mysql-down-after 5s",
                   "--mysql-down-after: a mysql setting, but set-nx-lua runs on redis");
  expect_bad_input("run --algorithm zk-recipe --timeout 500ms",
                   "--timeout: a redis setting, but zk-recipe runs on zookeeper");
  const fs::path file = scratch_dir.write(
      "other_backend_at_default.json",
      R"({"algorithm": "zk-recipe", "duration": "5s", "redis": {"timeout": "500ms"}})");
  EXPECT_EQ(locksim("run --quiet --scenario " + file.string()).exit_code, 0);
}

// margin deploys failover-lag's replica and monitor and searches its lag,
// and holds Redlock's drift kinds to the validity: a given one ran with
// margin's value instead, and said nothing.
TEST(GivenSettings, MarginRefusesASettingItSetsItself) {
  expect_bad_input("margin --fault failover-lag --failover --replicas 1 --down-after 3s",
                   "--down-after: margin --fault failover-lag deploys its own replica and monitor, "
                   "and searches the lag; leave --down-after out");
  expect_bad_input("margin --fault failover-lag --replication-lag 300ms",
                   "--replication-lag: margin --fault failover-lag");
  expect_bad_input("margin --fault client-drift --algorithm redlock --hold 3s..3s",
                   "--hold: margin --fault client-drift holds to the end of the lease's validity, "
                   "as redlock's careful client does; leave --hold out");
  // As margin deploys it: nothing replaced.
  const Outcome kept = locksim(
      "margin --quiet --fault failover-lag --failover --replicas 1 "
      "--down-after 500ms --out " +
      (scratch_dir.path() / "margin_kept").string());
  EXPECT_EQ(kept.exit_code, 0) << kept.err;
}

}  // namespace
