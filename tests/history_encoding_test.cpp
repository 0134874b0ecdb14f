// The history encoding (docs/explanation/checkers.md, "The history encoding"): a lease that was
// given up, expired or abandoned by a crash is recorded so that Knossos's
// mutex model reads each run right. On runs whose ground truth is clean the
// history-only checker never says invalid; on locksim's own runs the two
// agree, since a client's belief ends where its release is invoked.
#include <cstdio>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "checkers/linearizability.h"
#include "checkers/linearizability_report.h"
#include "checkers/mutex_checker.h"
#include "harness/run.h"
#include "harness/scenario.h"
#include "run_corpus.h"

namespace locksim::harness {
namespace {

// getset-clock-skew as it was before its idle gaps (the shipped file now
// waits 200-500 ms after each release), seeds 3 and 5: c2's lease ran out by
// its own clock (9 s ahead), it gave the release up and later took its own
// stale key over. Recorded :fail, Knossos read two acquires without a
// release; recorded :info, the run reads clean, as its ground truth is.
TEST(HistoryEncoding, GetsetLeaseGivenUpIsAnInfoRelease) {
  for (uint64_t seed : {3, 5}) {
    Scenario sc = load_scenario("getset-clock-skew");
    sc.config.seed = seed;
    sc.config.workload.idle_min = sc.config.workload.idle_max = Duration::zero();
    const RunResult r = simulate_and_check(sc.config).result;
    EXPECT_EQ(r.mutex.kind, checkers::Verdict::Kind::kValid) << "seed " << seed;
    EXPECT_EQ(r.linearizability.builtin.kind, checkers::Verdict::Kind::kValid)
        << "seed " << seed << ": " << r.linearizability.builtin.explanation;
    int given_up = 0;
    for (size_t i = 0; i < r.history.ops.size(); ++i) {
      const history::Op& op = r.history.ops[i];
      if (op.f != history::OpF::kRelease || op.type == history::OpType::kInvoke ||
          op.type == history::OpType::kOk)
        continue;
      EXPECT_EQ(op.type, history::OpType::kInfo) << "op " << op.index << ": " << op.detail;
      given_up += op.detail.find("lease expired by our clock") != std::string::npos;
      // The process is retired: its next op is another process's.
      for (size_t j = i + 1; j < r.history.ops.size(); ++j) {
        EXPECT_NE(r.history.ops[j].process, op.process) << "op " << r.history.ops[j].index;
      }
    }
    EXPECT_GE(given_up, 1) << "seed " << seed;
    EXPECT_FALSE(checkers::find_rule_break(r.history.ops).has_value());
  }
}

// A holder that crashes abandons its lease: a release invoked at the crash,
// completed :info, so the next holder is no violation.
TEST(HistoryEncoding, CrashedHolderAbandonsItsLease) {
  RunConfig c;
  c.algorithm = "set-nx-lua";
  c.seed = 4;
  c.duration = Duration::seconds(30);
  c.workload.clients = 3;
  c.algorithm_params["ttl"] = "10s";  // longer than any hold: only the crash matters
  c.faults.events.push_back(faults::parse_fault("crash @holder at 5s for 3s", "fault"));
  const RunResult r = simulate_and_check(c).result;
  int abandoned = 0;
  for (size_t i = 0; i + 1 < r.history.ops.size(); ++i) {
    const history::Op& a = r.history.ops[i];
    const history::Op& b = r.history.ops[i + 1];
    if (b.type == history::OpType::kInfo &&
        b.detail.find("lease is abandoned") != std::string::npos) {
      ++abandoned;
      EXPECT_EQ(a.type, history::OpType::kInvoke);
      EXPECT_EQ(a.f, history::OpF::kRelease);
      EXPECT_EQ(a.process, b.process);
      EXPECT_EQ(a.time_ns, 5'000'000'000);
    }
  }
  EXPECT_EQ(abandoned, 1);
  bool crash_interval = false;
  for (const history::HeldInterval& h : r.history.held)
    crash_interval |= h.end_reason == history::HeldInterval::EndReason::kCrash;
  EXPECT_TRUE(crash_interval);
  EXPECT_EQ(r.mutex.kind, checkers::Verdict::Kind::kValid);
  EXPECT_EQ(r.linearizability.builtin.kind, checkers::Verdict::Kind::kValid)
      << r.linearizability.builtin.explanation;
}

// Every algorithm under every fault, every shipped scenario, 20 seeds each:
// where the ground truth is clean the history-only checker (both models)
// says valid, and where it shows an overlap the history shows it too.
TEST(HistoryEncoding, HistoryCheckerAgreesWithGroundTruthOnLocksimRuns) {
  std::vector<testing::CorpusRun> runs = testing::algorithm_fault_runs(20);
  for (auto& r : testing::scenario_runs(20)) runs.push_back(std::move(r));
  std::map<std::string, std::pair<int, int>> by_algorithm;  // (clean, violating)
  for (const testing::CorpusRun& run : runs) {
    const RunResult r = simulate_and_check(run.config).result;
    ASSERT_NE(r.mutex.kind, checkers::Verdict::Kind::kUnknown) << run.name;
    const bool clean = r.mutex.kind == checkers::Verdict::Kind::kValid;
    (clean ? by_algorithm[run.algorithm].first : by_algorithm[run.algorithm].second)++;
    ASSERT_FALSE(checkers::find_rule_break(r.history.ops).has_value()) << run.name;
    EXPECT_EQ(r.linearizability.builtin.kind, r.mutex.kind)
        << run.name << "\nground truth: " << r.mutex.explanation
        << "\nhistory: " << r.linearizability.builtin.explanation;
    EXPECT_EQ(checkers::ground_truth_comparison(r.mutex, r.linearizability.builtin), "")
        << run.name;
    if (clean) {
      const auto owner =
          checkers::check_linearizable(r.history.ops, checkers::MutexModel::kOwnerMutex);
      EXPECT_EQ(owner.kind, checkers::Verdict::Kind::kValid)
          << run.name << ": " << owner.explanation;
    }
  }
  for (const auto& [algorithm, counts] : by_algorithm) {
    std::printf("%-18s %4d clean, %4d violating runs\n", algorithm.c_str(), counts.first,
                counts.second);
    // A script file (examples/scripts/) is met only through its shipped
    // scenarios, one safe and one violating: 20 seeds of each.
    EXPECT_GT(counts.first, algorithm.rfind("script:", 0) == 0 ? 19 : 20) << algorithm;
    EXPECT_GE(counts.second, 10) << algorithm;
  }
}

// The other direction is possible in general, and this is why: a history
// records what clients were told, not what they believed. Here a harness's
// client keeps working after it invokes its (asynchronous) release, so its
// belief outlasts the release's invocation; the ops linearize (the release
// may take effect before c2's acquire), yet both clients believed they held
// the lock in [3 ms, 4 ms).
TEST(HistoryEncoding, HistoryOnlyCheckerCannotSeeBeliefs) {
  history::History h;
  auto op = [&](int64_t process, history::OpType type, history::OpF f) {
    history::Op o;
    o.index = static_cast<int64_t>(h.ops.size());
    o.time_ns = (o.index + 1) * 1'000'000;
    o.process = process;
    o.client = static_cast<int>(process);
    o.type = type;
    o.f = f;
    h.ops.push_back(o);
  };
  op(0, history::OpType::kInvoke, history::OpF::kAcquire);  // 0 at 1 ms
  op(0, history::OpType::kOk, history::OpF::kAcquire);      // 1 at 2 ms: c1 holds
  op(0, history::OpType::kInvoke,
     history::OpF::kRelease);  // 2 at 3 ms: c1 invokes release, keeps working
  op(1, history::OpType::kInvoke, history::OpF::kAcquire);  // 3
  op(1, history::OpType::kOk, history::OpF::kAcquire);      // 4 at 5 ms: c2 holds
  op(0, history::OpType::kOk, history::OpF::kRelease);      // 5 at 6 ms: c1's belief ends only now
  history::HeldInterval a{0, 0, TimePoint{2'000'000}, TimePoint{6'000'000}, 1, 5};
  history::HeldInterval b{1, 1, TimePoint{5'000'000}, TimePoint{7'000'000}, 4, -1};
  h.held = {a, b};
  h.run_length = Duration::millis(7);
  const checkers::Verdict truth = checkers::check_mutex(h);
  const checkers::LinearizabilityVerdict history = checkers::check_linearizable(h.ops);
  EXPECT_EQ(truth.kind, checkers::Verdict::Kind::kInvalid);
  EXPECT_EQ(history.kind, checkers::Verdict::Kind::kValid);
  EXPECT_NE(checkers::ground_truth_comparison(truth, history).find("the history alone linearizes"),
            std::string::npos);
  // The opposite disagreement is a bug in the encoding, said loudly.
  checkers::Verdict clean;
  checkers::LinearizabilityVerdict broken;
  broken.kind = checkers::Verdict::Kind::kInvalid;
  EXPECT_EQ(checkers::ground_truth_comparison(clean, broken).rfind("DISAGREEMENT", 0), 0u);
}

}  // namespace
}  // namespace locksim::harness
