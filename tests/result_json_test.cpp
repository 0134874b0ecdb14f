// result.json and the CLI's text summary, from hand-built run results.
#include "reports/result_json.h"
#include "checkers/checker_list.h"
#include "reports/summary_text.h"

#include <string>

#include <gtest/gtest.h>

#include "checkers/mutex_checker.h"
#include "faults/fault_schedule.h"
#include "harness/backends.h"
#include "harness/run.h"
#include "harness/run_result.h"
#include "harness/scenario.h"
#include "harness/settings.h"
#include "harness/sweep/sweep.h"
#include "reports/timeline_svg.h"

namespace locksim::reports {
namespace {

using harness::RunResult;
using history::HeldInterval;
using history::HistoryRecorder;
using history::Op;
using history::OpF;
using history::OpType;

TimePoint at_ms(int64_t ms) {
  return TimePoint{} + Duration::millis(ms);
}

// `pairs` clients each acquire at i ms and release at 100 + i ms, so every two
// of them overlap: pairs*(pairs-1)/2 violations.
// With `faults`, nemesis ops are interleaved (at 0, 500, 1500 and 2500 ms):
// the client ops and every verdict and count must stay the same.
// The run's verdicts as a run gets them: through the one checker list.
void check(RunResult& run) {
  checkers::Recorded recorded;
  recorded.history = &run.history;
  recorded.errors = &run.errors;
  static_cast<checkers::Verdicts&>(run) = checkers::check_recorded(recorded);
}

RunResult overlapping_run(int clients, bool faults = false) {
  history::HistoryRecorder r;
  auto fault = [&](int64_t ms, const char* f, std::vector<std::string> value, std::string why) {
    if (!faults) return;
    history::Op o = history::nemesis_op(f, std::move(value), std::move(why));
    o.time_ns = at_ms(ms).ns;
    r.record(o);
  };
  auto op = [&](int64_t ms, int c, history::OpType t, history::OpF f) {
    history::Op o;
    o.time_ns = at_ms(ms).ns;
    o.process = c;
    o.client = c;
    o.type = t;
    o.f = f;
    return r.record(o);
  };
  fault(0, "pause", {"c1", "1s"}, "");
  for (int c = 0; c < clients; ++c) op(0, c, history::OpType::kInvoke, history::OpF::kAcquire);
  for (int c = 0; c < clients; ++c) {
    r.begin_hold(c, c, at_ms(1 + c), op(1 + c, c, history::OpType::kOk, history::OpF::kAcquire));
  }
  fault(500, "partition", {"c1,c2", "redis-1", "1s"}, "");
  fault(1000, "resume", {"c1"}, "");
  for (int c = 0; c < clients; ++c) {
    r.end_hold(c, at_ms(1000 + c),
               op(1000 + c, c, history::OpType::kInvoke, history::OpF::kRelease),
               history::HeldInterval::EndReason::kRelease);
  }
  op(2000, 0, history::OpType::kOk, history::OpF::kRelease);
  // Only a client that invoked a release may complete one (the recorder asserts it).
  if (clients > 1) op(2001, 1, history::OpType::kFail, history::OpF::kRelease);
  fault(2500, "skip", {"crash", "@holder"}, "nobody holds the lock");

  RunResult run;
  run.algorithm = "redlock";
  run.seed = 42;
  run.params = {{"clients", clients}, {"ttl_ms", 30000}};
  run.history = r.finish(at_ms(3000));
  check(run);
  run.events = 1234;
  run.replay_command = "locksim run --algorithm redlock --seed 42";
  harness::fill_counts(run);
  return run;
}

TEST(ResultJson, CountsComeFromTheHistory) {
  const RunResult run = overlapping_run(3);
  EXPECT_EQ(run.acquisitions, 3);
  EXPECT_EQ(run.acquire_fail, 0);
  EXPECT_EQ(run.releases_ok, 1);
  EXPECT_EQ(run.releases_fail, 1);
  EXPECT_EQ(run.releases_info, 0);
}

// A backend's notes (e.g. ZooKeeper's negotiated timeout) reach result.json
// and the summary in the backend's order, without the report knowing it.
TEST(ResultJson, BackendNotesInJsonAndSummary) {
  RunResult run = overlapping_run(2);
  run.backend_notes = {{"zookeeper.negotiated_session_timeout", "4s"},
                       {"zookeeper.session_expired[0]", "c1's session 2: deadline 14.000s"}};
  const nlohmann::ordered_json j = result_to_json(run);
  ASSERT_EQ(j["backend"].size(), 2u);
  EXPECT_EQ(j["backend"].begin().key(), "zookeeper.negotiated_session_timeout");
  EXPECT_EQ(j["backend"]["zookeeper.negotiated_session_timeout"], "4s");
  const std::string summary = summary_text(run);
  EXPECT_NE(summary.find("zookeeper.negotiated_session_timeout: 4s\n"), std::string::npos)
      << summary;
  EXPECT_LT(summary.find("negotiated_session_timeout"), summary.find("session_expired[0]"));
  EXPECT_TRUE(result_to_json(overlapping_run(2))["backend"].empty());
}

// result.json's "params" is the run's settings converted to a sorted JSON
// object (harness::config_to_json), not printed and parsed back as it once
// was: for every shipped scenario the same text.
TEST(ResultJson, ParamsAreTheSettingsAsPrintedAndParsedBack) {
  int scenarios = 0;
  for (const harness::BuiltinScenario& b : harness::builtin_scenario_texts()) {
    SCOPED_TRACE(b.name);
    harness::RunConfig c = harness::load_scenario(b.name).config;
    const std::string converted = harness::config_to_json(c).dump();
    // A Redis run's masters as it had them; another backend's stay "auto".
    if (harness::backend_of(c).name == "redis") c.redis = harness::resolved_topology(c);
    EXPECT_EQ(converted, nlohmann::json::parse(harness::settings_to_json(c).dump()).dump());
    ++scenarios;
  }
  EXPECT_GT(scenarios, 50);
}

TEST(ResultJson, HasEveryTopLevelKeyInOrder) {
  const RunResult run = overlapping_run(2);
  const nlohmann::ordered_json j = result_to_json(run);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"locksim_result", "algorithm", "seed", "params",
                                            "verdict", "finding", "safety", "consequences",
                                            "exposure", "linearizability", "liveness", "faults",
                                            "counts", "held", "errors", "replay", "backend"}));
  EXPECT_EQ(j["finding"], "safety");
  EXPECT_EQ(j["verdict"], "invalid");
  EXPECT_EQ(j["seed"], 42u);
  EXPECT_EQ(j["params"]["ttl_ms"], 30000);
  EXPECT_EQ(j["safety"]["violations"], 1);
  const auto& o = j["safety"]["overlaps"][0];
  EXPECT_EQ(o["window"]["start_ns"], at_ms(2).ns);
  EXPECT_EQ(o["window"]["end_ns"], at_ms(1000).ns);
  EXPECT_EQ(o["window"]["start_s"], 0.002);
  EXPECT_EQ(o["a"]["client"], "c1");
  EXPECT_EQ(o["a"]["acquire_index"], 2);
  EXPECT_EQ(o["a"]["release_index"], 4);
  EXPECT_EQ(o["b"]["client"], "c2");
  EXPECT_EQ(j["counts"]["acquisitions"], 2);
  EXPECT_EQ(j["counts"]["events"], 1234);
  EXPECT_EQ(j["held"].size(), 2u);
  EXPECT_EQ(j["replay"], "locksim run --algorithm redlock --seed 42");
  // Byte-deterministic.
  EXPECT_EQ(result_json_text(run), result_json_text(overlapping_run(2)));
  EXPECT_EQ(result_json_text(run).back(), '\n');
}

TEST(ResultJson, SummaryListsTenViolationsThenTheRest) {
  const RunResult run = overlapping_run(6);  // 15 overlapping pairs
  const std::string text = summary_text(run);
  EXPECT_EQ(text.rfind("VIOLATION: mutual exclusion broken 15 times\n", 0), 0u) << text;
  EXPECT_NE(text.find("redlock, seed 42: 20 ops, 6 acquisitions (0 failed, 0 unknown), 1 releases "
                      "(1 failed, 0 unknown), 3.000s of true time, 1234 events\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  1. c1 (acquire op 6, release op 12) and c2 (acquire op 7, "
                      "release op 13) both held the lock in [0.002s, 1.000s) for 0.998s\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  10. "), std::string::npos);
  EXPECT_EQ(text.find("  11. "), std::string::npos);
  EXPECT_NE(text.find("  ... and 5 more\n"), std::string::npos);
  EXPECT_NE(text.find("replay: locksim run --algorithm redlock --seed 42\n"), std::string::npos);
}

TEST(ResultJson, FaultsAreTheHistorysNemesisOpsAndCountNowhereElse) {
  const RunResult plain = overlapping_run(6);
  const RunResult run = overlapping_run(6, true);
  ASSERT_EQ(run.history.ops.size(), plain.history.ops.size() + 4);
  EXPECT_EQ(run.client_ops, plain.client_ops);
  EXPECT_EQ(run.client_ops, 20);
  const nlohmann::ordered_json j = result_to_json(run);
  const nlohmann::ordered_json p = result_to_json(plain);
  EXPECT_EQ(j["counts"], p["counts"]) << "nemesis ops are not the workload's";
  EXPECT_EQ(j["safety"]["violations"], p["safety"]["violations"]);
  EXPECT_EQ(j["verdict"], p["verdict"]);
  EXPECT_TRUE(p["faults"].empty());
  ASSERT_EQ(j["faults"].size(), 4u);
  EXPECT_EQ(j["faults"][0].dump(),
            R"({"index":0,"time_ns":0,"f":"pause","value":["c1","1s"],"what":"pause c1 for 1s"})");
  EXPECT_EQ(j["faults"][1]["what"], "partition c1,c2|redis-1 for 1s");
  EXPECT_EQ(j["faults"][2]["what"], "resume c1");
  EXPECT_EQ(j["faults"][3]["what"], "skip crash @holder (nobody holds the lock)");
  EXPECT_EQ(j["faults"][3]["time_ns"], at_ms(2500).ns);
  // Each marker points at its op in the history.
  for (const auto& f : j["faults"]) {
    const history::Op& op = run.history.ops[f["index"].get<size_t>()];
    EXPECT_FALSE(history::is_client_op(op));
    EXPECT_EQ(f["time_ns"], op.time_ns);
  }
  const std::string text = summary_text(run);
  EXPECT_NE(text.find("redlock, seed 42: 20 ops, 6 acquisitions"), std::string::npos) << text;
  EXPECT_NE(text.find("faults (4): 0.000s pause c1 for 1s; 0.500s partition c1,c2|redis-1 for "
                      "1s; 1.000s resume c1; 2.500s skip crash @holder (nobody holds the lock)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(summary_text(plain).find("faults ("), std::string::npos);
}

TEST(ResultJson, ValidAndUnknownSummaries) {
  RunResult run = overlapping_run(1);
  EXPECT_EQ(harness::overall_verdict(run), checkers::Verdict::Kind::kValid);
  EXPECT_EQ(summary_text(run).rfind("OK: no mutual-exclusion violation in 1 acquisition\n", 0), 0u);
  EXPECT_EQ(result_to_json(run)["verdict"], "valid");

  run.errors.push_back("client 2: std::logic_error: boom\n  at frame 1");
  check(run);
  EXPECT_EQ(harness::overall_verdict(run), checkers::Verdict::Kind::kUnknown);
  EXPECT_EQ(result_to_json(run)["verdict"], "unknown");
  const std::string text = summary_text(run);
  EXPECT_EQ(text.rfind("UNKNOWN: no mutual-exclusion violation in 1 acquisition, but 1 client "
                       "error was recorded: the run could not finish as asked\n",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("client errors (1):\n  client 2: std::logic_error: boom\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(result_to_json(run)["errors"][0], "client 2: std::logic_error: boom\n  at frame 1");

  run.errors = {"bad \xff byte"};
  EXPECT_NO_THROW(result_json_text(run));
}

// A client error voids a liveness finding: the clients that threw stopped
// trying, so a stuck lock may be dead clients. It was outranked by it: a run
// whose every client threw passed a gate expecting liveness (exit 1, "lock
// stuck"). A violation it never hides (tests/script_sweep_test.cpp has the
// liveness case end to end).
TEST(ResultJson, AClientErrorVoidsAStuckLockButNeverAViolation) {
  const auto answer = [](checkers::Kind kind, checkers::Validity v) {
    return checkers::check_of("c", v, kind, v == checkers::Validity::kValid ? "" : "why", true);
  };
  checkers::Check errors = answer(checkers::Kind::kUnknown, checkers::Validity::kUnknown);
  errors.voids_run = true;
  const checkers::Check stuck = answer(checkers::Kind::kLiveness, checkers::Validity::kInvalid);
  const checkers::Check overlap = answer(checkers::Kind::kSafety, checkers::Validity::kInvalid);
  EXPECT_EQ(checkers::merged({stuck, errors}), checkers::Validity::kUnknown);
  EXPECT_EQ(checkers::merged({errors, stuck}), checkers::Validity::kUnknown);
  EXPECT_EQ(checkers::merged({errors, overlap}), checkers::Validity::kInvalid);
  EXPECT_EQ(checkers::merged({stuck}), checkers::Validity::kInvalid);

  RunResult run = overlapping_run(2);
  run.errors.push_back("c1: boom");
  check(run);
  EXPECT_EQ(harness::overall_verdict(run), checkers::Verdict::Kind::kInvalid);
  EXPECT_EQ(summary_text(run).rfind("VIOLATION: mutual exclusion broken 1 time\n", 0), 0u);
  EXPECT_EQ(harness::summarize_run(run, 0, "none").finding, "safety");
}

// The nemesis lane of the HTML timeline: one band per fault, on its own row
// where faults overlap, from the fault to where it really ended.
std::vector<std::string> nemesis_bands(const std::string& svg) {
  std::vector<std::string> out;  // "y=... width=... title" of each nemesis-lane band
  size_t at = 0;
  while ((at = svg.find("<rect class=\"fault\"", at)) != std::string::npos) {
    const size_t end = svg.find("</rect>", at);
    const std::string r = svg.substr(at, end - at);
    at = end;
    if (r.find("fill-opacity=\"0.8\"") == std::string::npos) continue;  // a client lane's shade
    const auto attr = [&r](const std::string& name) {
      const size_t p = r.find(name + "=\"") + name.size() + 2;
      return r.substr(p, r.find('"', p) - p);
    };
    const size_t title = r.find("<title>") + 7;
    out.push_back(attr("y") + " " + attr("width") + " " +
                  r.substr(title, r.find("</title>") - title));
  }
  return out;
}

TEST(Timeline, EveryFaultHasItsOwnBandWhereItActed) {
  using harness::simulate_and_check;
  const RunResult r =
      simulate_and_check(harness::load_scenario("redlock-node-restart").config).result;
  const std::vector<std::string> bands = nemesis_bands(timeline_svg(r));
  // Two partitions from 0 s to the end (never healed) and a 100 ms crash.
  ASSERT_EQ(bands.size(), 3u) << ::testing::PrintToString(bands);
  EXPECT_EQ(bands[0], "26 1000 0.000s: partition c1|redis-4,redis-5");
  EXPECT_EQ(bands[1], "32 1000 0.000s: partition c2|redis-1,redis-2");
  EXPECT_EQ(bands[2].substr(0, 3), "38 ") << bands[2];
  EXPECT_NE(bands[2].find(" 2.000s: crash redis-3 for 100ms"), std::string::npos) << bands[2];
}

// A timed partition's band ends at its own heal, not at another one's.
TEST(Timeline, OverlappingTimedPartitionsEndOnTheirOwn) {
  harness::RunConfig c;
  c.algorithm = "set-nx-lua";
  c.duration = Duration::seconds(10);
  c.faults.events = {faults::parse_fault("partition c1|redis-1 at 1s for 5s", "f"),
                     faults::parse_fault("partition c2|redis-1 at 3s for 5s", "f")};
  const RunResult r = harness::simulate_and_check(c).result;
  const std::vector<std::string> bands = nemesis_bands(timeline_svg(r));
  ASSERT_EQ(bands.size(), 2u) << ::testing::PrintToString(bands);
  EXPECT_EQ(bands[0], "26 500 1.000s: partition c1|redis-1 for 5s");
  EXPECT_EQ(bands[1], "35 500 3.000s: partition c2|redis-1 for 5s");
}

}  // namespace
}  // namespace locksim::reports
