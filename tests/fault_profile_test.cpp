// Fault profiles (faults/profile.h): schedules are data, drawn from the seed,
// swarm style, aimed at what the deployment exposes; and a run with a
// profile records the schedule and replays it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "env/parse.h"
#include "faults/profile.h"
#include "harness/profile_deployment.h"
#include "harness/run.h"
#include "harness/settings.h"
#include "reports/result_json.h"
#include "tests/locksim_binary.h"

namespace {

using locksim::faults::DeploymentView;
using locksim::faults::FaultKind;
using locksim::faults::generate_schedule;
using locksim::faults::parse_profile;

DeploymentView view() {
  DeploymentView v;
  v.clients = {"c1", "c2", "c3"};
  v.servers = {"s-1", "s-1-r1", "s-2"};
  v.primaries = {"s-1", "s-2"};
  v.lease = locksim::Duration::seconds(10);
  v.run_length = locksim::Duration::seconds(60);
  return v;
}

std::vector<std::string> described(const locksim::faults::FaultSchedule& s) {
  std::vector<std::string> out;
  for (const auto& e : s.events) out.push_back(e.describe());
  return out;
}

TEST(FaultProfile, SameSeedSameScheduleOtherSeedsDiffer) {
  for (const auto& name : locksim::faults::profile_names()) {
    if (name == "none") continue;
    const auto parts = parse_profile(name, "--profile");
    EXPECT_EQ(described(generate_schedule(parts, 7, view())),
              described(generate_schedule(parts, 7, view())))
        << name;
    std::set<std::vector<std::string>> distinct;
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      distinct.insert(described(generate_schedule(parts, seed, view())));
    }
    EXPECT_GE(distinct.size(), 18u) << name << ": seeds must draw their own intensities";
  }
}

// The events of `s` but a client-clock schedule's drift of "@holder", which
// only an idle lock's schedule has (client_clock in faults/profile.cpp).
std::vector<locksim::faults::FaultEvent> without_holder_drift(
    const locksim::faults::FaultSchedule& s) {
  std::vector<locksim::faults::FaultEvent> out;
  for (const auto& e : s.events) {
    if (e.kind != FaultKind::kSetDrift || e.node != "@holder") out.push_back(e);
  }
  return out;
}

// A lock left idle (DeploymentView::idle_lock) gets every fault but heals
// 'on held+D' (D 50-500 ms); the other draws are what they were, so without
// the flag the schedule is unchanged.
TEST(FaultProfile, AnIdleLockHasEveryFaultOnHeld) {
  int aimed = 0, faults = 0;
  for (const auto& name : locksim::faults::profile_names()) {
    if (name == "none") continue;
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      DeploymentView idle = view();
      idle.idle_lock = true;
      const auto parts = parse_profile(name, "--profile");
      const auto plain = generate_schedule(parts, seed, view());
      const auto aimed_at = without_holder_drift(generate_schedule(parts, seed, idle));
      EXPECT_EQ(without_holder_drift(plain).size(), plain.events.size());
      ASSERT_EQ(plain.events.size(), aimed_at.size()) << name << " seed " << seed;
      for (size_t i = 0; i < plain.events.size(); ++i) {
        const auto& a = plain.events[i];
        const auto& b = aimed_at[i];
        EXPECT_FALSE(a.unless_held);
        EXPECT_EQ(a.at, b.at);
        if (a.kind == FaultKind::kHeal || a.after_grant) {
          EXPECT_EQ(a.describe(), b.describe()) << "a heal, or already on a grant";
          continue;
        }
        ++faults;
        EXPECT_TRUE(b.unless_held) << name << " seed " << seed << ": " << b.describe();
        if (!b.unless_held) continue;
        ++aimed;
        ASSERT_TRUE(b.after_grant.has_value());
        EXPECT_GE(*b.after_grant, locksim::Duration::millis(50));
        EXPECT_LE(*b.after_grant, locksim::Duration::millis(500));
        EXPECT_NE(b.describe().find(" on held+"), std::string::npos) << b.describe();
      }
    }
  }
  EXPECT_GT(faults, 0);
  EXPECT_EQ(aimed, faults);
}

// A client's clock matters to a lock only while that client holds: with an
// idle lock, every client-clock seed also drifts whoever holds at a drawn
// time (issue 27's coverage), and no other profile does.
TEST(FaultProfile, AnIdleLocksClientClocksDriftTheHolderInEverySeed) {
  DeploymentView idle = view();
  idle.idle_lock = true;
  for (const auto& name : locksim::faults::profile_names()) {
    int drifted = 0;
    for (uint64_t seed = 1; seed <= 200; ++seed) {
      const auto s = generate_schedule(parse_profile(name, "--profile"), seed, idle);
      const size_t extra = s.events.size() - without_holder_drift(s).size();
      EXPECT_LE(extra, 1u);
      drifted += static_cast<int>(extra);
      for (const auto& e : s.events) {
        if (e.kind != FaultKind::kSetDrift || e.node != "@holder") continue;
        EXPECT_GE(e.at, idle.run_length / 20);
        EXPECT_LE(e.at, idle.run_length * 4 / 5);
        EXPECT_LE(std::abs(e.drift_ppm), 80'000);
      }
    }
    if (name == "client-clock") {
      EXPECT_EQ(drifted, 200);
    } else {
      EXPECT_EQ(drifted, 0) << name;
    }
  }
}

TEST(FaultProfile, EveryEventIsInsideTheRunAndReadsBack) {
  for (const auto& name : locksim::faults::profile_names()) {
    for (uint64_t seed = 1; seed <= 50; ++seed) {
      const auto s = generate_schedule(parse_profile(name, "--profile"), seed, view());
      EXPECT_EQ(s.events.empty(), name == "none") << name << " seed " << seed;
      for (const auto& e : s.events) {
        EXPECT_LE(e.at, view().run_length);
        const auto again = locksim::faults::parse_fault(e.describe(), "test");
        EXPECT_EQ(again.describe(), e.describe());
      }
    }
  }
}

TEST(FaultProfile, AimsAtWhatTheDeploymentExposes) {
  std::set<std::string> first_crashed;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    const auto events = generate_schedule({"failover"}, seed, view()).events;
    ASSERT_FALSE(events.empty());
    first_crashed.insert(events.front().node);
    for (const auto& e : events) {
      EXPECT_EQ(e.kind, FaultKind::kCrash);
      EXPECT_TRUE(e.node.rfind("s-", 0) == 0 || e.node == "@primary")
          << "only servers: " << e.describe();
    }
  }
  EXPECT_EQ(first_crashed, (std::set<std::string>{"s-1", "s-2"}))
      << "a failover starts at a primary";
  std::set<FaultKind> clock_kinds;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    for (const auto& e : generate_schedule({"server-clock"}, seed, view()).events) {
      clock_kinds.insert(e.kind);
      EXPECT_TRUE(e.node.rfind("s-", 0) == 0) << e.describe();
    }
  }
  EXPECT_EQ(clock_kinds, (std::set<FaultKind>{FaultKind::kJumpClock, FaultKind::kSetDrift}));
}

TEST(FaultProfile, PausesSpanWellUnderToSeveralTimesTheLease) {
  locksim::Duration shortest = locksim::Duration::max(), longest = locksim::Duration::zero();
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    for (const auto& e : generate_schedule({"pause"}, seed, view()).events) {
      shortest = std::min(shortest, e.duration);
      longest = std::max(longest, e.duration);
    }
  }
  EXPECT_LT(shortest, locksim::Duration::seconds(3));
  EXPECT_GT(longest, locksim::Duration::seconds(25));
}

TEST(FaultProfile, CombinedPartsKeepTheirOwnStreams) {
  const auto pause = described(generate_schedule({"pause"}, 3, view()));
  const auto both = described(generate_schedule({"pause", "partition"}, 3, view()));
  for (const auto& e : pause) {
    EXPECT_NE(std::find(both.begin(), both.end(), e), both.end()) << e;
  }
  EXPECT_GT(both.size(), pause.size());
}

TEST(FaultProfile, BadProfilesNameTheField) {
  for (const std::string bad : {"paws", "pause+", "pause+pause", "none+pause"}) {
    try {
      parse_profile(bad, "--profile");
      ADD_FAILURE() << bad;
    } catch (const locksim::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("--profile"), std::string::npos) << e.what();
    }
  }
}

// A run's profile schedule is data in result.json, and the replay command
// (which carries --profile) reproduces the run byte for byte.
TEST(FaultProfile, RunRecordsAndReplaysItsSchedule) {
  locksim::harness::RunConfig c;
  c.algorithm = "set-nx-lua";
  c.profile = "pause+failover";
  c.seed = 11;
  c.duration = locksim::Duration::seconds(20);
  const auto first = locksim::harness::simulate_and_check(c);
  const auto j = locksim::reports::result_to_json(first.result);
  ASSERT_TRUE(j.contains("profile"));
  EXPECT_EQ(j["profile"]["name"], "pause+failover");
  EXPECT_FALSE(j["profile"]["schedule"].empty());
  EXPECT_NE(first.result.replay_command.find("--profile pause+failover"), std::string::npos);
  EXPECT_NE(first.result.replay_command.find("--failover"), std::string::npos)
      << "the deployment the profile needed is in the replay";
  const auto dir = std::filesystem::temp_directory_path() / "locksim_profile_replay";
  std::filesystem::remove_all(dir);
  std::string replay = first.result.replay_command;
  replay = replay.substr(replay.find(' ') + 1);  // drop "locksim"
  const auto o = locksim::testing::locksim(replay + " --quiet --out " + dir.string());
  EXPECT_NE(o.exit_code, 2) << o.err;
  EXPECT_EQ(locksim::testing::slurp(dir / "result.json"),
            locksim::reports::result_json_text(first.result));
  std::filesystem::remove_all(dir);
}

}  // namespace

namespace {

// "@primary" names the primary at the moment the fault fires: after a
// failover, the promoted replica. A crash of a node already down is a skip.
TEST(FaultProfile, AtPrimaryHitsThePromotedReplicaAndADownNodeIsSkipped) {
  locksim::harness::RunConfig c;
  c.algorithm = "set-nx-lua";
  c.seed = 3;
  c.duration = locksim::Duration::seconds(20);
  c.redis.replicas = 1;
  c.redis.failover = true;
  c.redis.down_after = locksim::Duration::seconds(1);
  c.redis.discovery_delay = locksim::Duration::millis(200);
  for (const char* f : {"crash redis-1 at 1s for 15s", "crash @primary at 2s for 1s",
                        "crash @primary at 6s for 1s"}) {
    c.faults.events.push_back(locksim::faults::parse_fault(f, "f"));
  }
  const auto r = locksim::harness::simulate_and_check(c);
  std::vector<std::string> crashed;
  std::vector<std::string> skipped;
  for (const auto& op : r.result.history.ops) {
    if (op.f == locksim::history::OpF::kCrash) crashed.push_back(op.value.at(0));
    if (op.f == locksim::history::OpF::kSkip) skipped.push_back(op.detail);
  }
  // At 2 s redis-1 is still the master (failover at about 2.1 s) and down.
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0], "already down");
  // At 6 s the replica promoted in between is the primary.
  EXPECT_EQ(crashed, (std::vector<std::string>{"redis-1", "redis-1-r1"}));
}

}  // namespace

namespace {

// A pause or a partition matters only by outlasting the lease, so a lock whose
// default lease outlasts the run (the MySQL article's one-year deadline) gets
// a lease drawn per seed: longer than every hold (the lock stays safe until a
// fault outlasts it), whole seconds, in the result and its replay. A ttl the
// user gave, a short default, or another profile keep theirs.
TEST(FaultProfile, PauseAndPartitionDrawALeaseTheirFaultsCanOutlast) {
  using locksim::Duration;
  using locksim::harness::with_profile_deployment;
  locksim::harness::RunConfig c;
  c.algorithm = "mysql-center";
  c.duration = Duration::seconds(20);
  std::set<std::string> drawn;
  for (const char* profile : {"pause", "partition", "client-crash+pause"}) {
    c.profile = profile;
    for (uint64_t seed = 1; seed <= 30; ++seed) {
      c.seed = seed;
      const auto once = with_profile_deployment(c);
      ASSERT_EQ(once.algorithm_params.count("ttl"), 1u) << profile << " seed " << seed;
      const std::string ttl = once.algorithm_params.at("ttl");
      const Duration lease = locksim::parse_duration(ttl, "ttl");
      EXPECT_GT(lease, c.workload.hold_max) << ttl;
      EXPECT_LE(lease, c.workload.hold_max * 4) << ttl;
      EXPECT_EQ(lease.ns % Duration::seconds(1).ns, 0) << ttl << ": a DATETIME keeps no fraction";
      EXPECT_EQ(with_profile_deployment(once).algorithm_params, once.algorithm_params)
          << "idempotent, so the replay runs the same lease";
      drawn.insert(ttl);
    }
  }
  EXPECT_EQ(drawn, (std::set<std::string>{"6s", "9s", "12s"}));
  c.profile = "client-crash";  // the one-year deadline is what makes this L
  EXPECT_EQ(with_profile_deployment(c).algorithm_params.count("ttl"), 0u);
  c.profile = "pause";
  c.algorithm_params["ttl"] = "1h";  // given: kept
  EXPECT_EQ(with_profile_deployment(c).algorithm_params.at("ttl"), "1h");
  c.algorithm_params.clear();
  c.algorithm = "set-nx-lua";  // a 10 s default: the faults already cross it
  EXPECT_EQ(with_profile_deployment(c).algorithm_params.count("ttl"), 0u);
  c.algorithm = "mysql-center";
  const auto r = locksim::harness::simulate_and_check(c);
  EXPECT_NE(r.result.replay_command.find("--ttl "), std::string::npos) << r.result.replay_command;
}

}  // namespace
