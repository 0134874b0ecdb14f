// Every shipped scenario gives the result its file promises, for the reason
// its description gives.
#include <gtest/gtest.h>

#include <string>

#include "env/parse.h"
#include "harness/run.h"
#include "harness/scenario.h"

namespace locksim::harness {
namespace {

SimRunReport run(const std::string& name) {
  const Scenario s = load_scenario(name);
  return simulate_and_check(s.config);
}

// Faults are the history's nemesis ops.
bool has_fault(const RunResult& r, const std::string& prefix) {
  for (const history::Op& op : r.history.ops) {
    if (!history::is_client_op(op) && history::describe_nemesis_op(op).rfind(prefix, 0) == 0) return true;
  }
  return false;
}

TEST(Scenarios, EveryShippedScenarioGivesItsExpectedResult) {
  ASSERT_GE(builtin_scenario_texts().size(), 12u);
  for (const BuiltinScenario& b : builtin_scenario_texts()) {
    SCOPED_TRACE(b.name);
    const Scenario s = parse_scenario(b.json, b.name);
    ASSERT_NE(s.expect, Scenario::Expect::kUnspecified)
        << "every shipped scenario says what to expect";
    ASSERT_FALSE(s.description.empty());
    EXPECT_EQ(s.name, b.name);
    const SimRunReport r = simulate_and_check(s.config);
    EXPECT_TRUE(r.result.errors.empty()) << r.result.errors.front();
    switch (s.expect) {
      case Scenario::Expect::kViolation:
        EXPECT_EQ(r.result.mutex.kind, checkers::Verdict::Kind::kInvalid) << r.result.mutex.explanation;
        EXPECT_STREQ(checkers::finding(r.result.checks), "safety");
        break;
      case Scenario::Expect::kSafe:
        EXPECT_EQ(overall_verdict(r.result), checkers::Verdict::Kind::kValid)
            << r.result.mutex.explanation << " / " << r.result.liveness.explanation;
        EXPECT_GT(r.result.acquisitions, 0);
        break;
      case Scenario::Expect::kLiveness:
        EXPECT_EQ(r.result.mutex.kind, checkers::Verdict::Kind::kValid) << r.result.mutex.explanation;
        EXPECT_EQ(r.result.liveness.kind, checkers::Verdict::Kind::kInvalid);
        EXPECT_STREQ(checkers::finding(r.result.checks), "liveness");
        break;
      case Scenario::Expect::kUnspecified:
        break;
    }
  }
}

TEST(Scenarios, CrashBetweenSetnxAndExpireLeavesAKeyWithoutTtlForever) {
  const SimRunReport r = run("naive-setnx-crash-between");
  const checkers::LivenessVerdict& l = r.result.liveness;
  EXPECT_EQ(l.kind, checkers::Verdict::Kind::kInvalid);
  // Stuck from the crash to the end of the run, with clients trying throughout.
  EXPECT_GE(l.unheld_for, Duration::seconds(55));
  EXPECT_GT(l.failed_attempts, 20);
  EXPECT_NE(r.result.replay_command.find("naive-setnx"), std::string::npos);
}

TEST(Scenarios, LateDeleteLetsAThirdClientIn) {
  const SimRunReport r = run("naive-setnx-late-delete");
  ASSERT_EQ(r.result.mutex.kind, checkers::Verdict::Kind::kInvalid);
  // The paused holder's plain DEL succeeded although its own key had expired
  // (it held for longer than the 3 s TTL): it deleted the key of a client
  // that was holding at that moment, and someone else got in right after.
  bool late_delete = false;
  for (const history::HeldInterval& x : r.result.history.held) {
    if (x.end_reason != history::HeldInterval::EndReason::kRelease ||
        x.end - x.start <= Duration::seconds(3)) {
      continue;
    }
    const auto& ops = r.result.history.ops;
    const history::Op& invoke = ops[static_cast<size_t>(x.release_index)];
    bool deleted = false;  // DEL answered 1: some key was removed
    for (size_t i = static_cast<size_t>(x.release_index) + 1; i < ops.size(); ++i) {
      if (ops[i].process == invoke.process) {
        deleted = ops[i].type == history::OpType::kOk && ops[i].f == history::OpF::kRelease;
        break;
      }
    }
    if (!deleted) continue;
    for (const checkers::Overlap& o : r.result.mutex.overlaps) {
      const bool victim_holding = o.a.client != x.client && o.a.start < x.end && o.a.end > x.end;
      if (victim_holding && o.b.start >= x.end && o.b.start - x.end < Duration::millis(50)) {
        late_delete = true;
      }
    }
  }
  EXPECT_TRUE(late_delete)
      << "expected an overlap that starts right after a paused holder's late DEL";
}

TEST(Scenarios, FailoverPromotesTheReplicaThatNeverSawTheKey) {
  const SimRunReport r = run("set-nx-lua-failover");
  EXPECT_EQ(r.output.failovers, 1);
  ASSERT_EQ(r.result.mutex.kind, checkers::Verdict::Kind::kInvalid);
  // The second holder got in after the failover (crash at 50 ms + down_after 2 s).
  EXPECT_GE(r.result.mutex.overlaps.front().b.start, TimePoint{} + Duration::seconds(2));
}

TEST(Scenarios, FsyncAlwaysKeepsTheKeyAcrossTheRestartAndNoFsyncLosesIt) {
  const SimRunReport lost = run("set-nx-lua-restart-no-fsync");
  const SimRunReport kept = run("set-nx-lua-restart-fsync-always");
  EXPECT_TRUE(has_fault(lost.result, "restart redis-1"));
  EXPECT_TRUE(has_fault(kept.result, "restart redis-1"));
  ASSERT_EQ(lost.result.mutex.kind, checkers::Verdict::Kind::kInvalid);
  // The intruder acquired right after the restart at 3 s.
  EXPECT_GE(lost.result.mutex.overlaps.front().b.start, TimePoint{} + Duration::seconds(3));
  EXPECT_EQ(kept.result.mutex.kind, checkers::Verdict::Kind::kValid);
}

TEST(Scenarios, RedlockDelayedRestartIsSafeWhereImmediateRestartIsNot) {
  EXPECT_EQ(run("redlock-node-restart").result.mutex.kind, checkers::Verdict::Kind::kInvalid);
  const SimRunReport delayed = run("redlock-delayed-restart");
  EXPECT_EQ(delayed.result.mutex.kind, checkers::Verdict::Kind::kValid);
  EXPECT_GE(delayed.result.acquisitions, 3);  // the lock changed hands after the restart
}

TEST(Scenarios, BadFilesNameTheOffendingField) {
  const auto error_of = [](const std::string& json) -> std::string {
    try {
      (void)prepare_run(parse_scenario(json, "bad.json").config);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_EQ(error_of(R"({"algorithm": "redlock", "params": {"quorum": "6"}})"),
            "bad.json: params.quorum: expected a number from 1 to the 5 redis servers, got 6");
  EXPECT_NE(error_of(R"({"algorithm": "set-nx-lua", "params": {"ttl": "0s"}})")
                .find("bad.json: params.ttl: expected a positive duration"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"algorithm": "redlock", "params": {"drift-factor": "1.5"}})")
                .find("bad.json: params.drift-factor: expected a number in [0, 1)"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"algorithm": "set-nx-lua", "redis": {"persistence": "fsync"}})")
                .find("bad.json: redis.persistence: expected one of none"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"algorithm": "set-nx-lua", "workload": {"clients": 0}})")
                .find("bad.json: workload.clients: expected a whole number from 1"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"algorithm": "set-nx-lua", "redis": {"master": 2}})")
                .find("bad.json: redis.master: expected no such field"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"algorithm": "set-nx-lua", "faults": ["pause c1 at soon"]})")
                .find("bad.json: faults[0]"),
            std::string::npos);
  EXPECT_NE(error_of("{\"algorithm\": ").find("bad.json: invalid JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"seed": 1})").find("bad.json: algorithm: expected an algorithm name"),
            std::string::npos);
  // A fault naming a node that does not exist is caught before the run starts.
  const Scenario s = parse_scenario(
      R"({"algorithm": "set-nx-lua", "faults": ["crash redis-9 at 1s"]})", "bad.json");
  try {
    simulate_and_check(s.config);
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json: faults[0]: no node named 'redis-9'"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace locksim::harness
