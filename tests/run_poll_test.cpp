// A long `run` asks a poll between events (harness::RunPoll) for its
// progress line and its Ctrl-C. Asking must change nothing: a poll that
// never stops gives the bytes of a run without one, over faults of every
// kind. A poll that stops cuts the run: its history is the whole run's up to
// the cut, ops in flight left open, and the checkers judge what ran. And
// the command: a SIGTERM after the progress line writes the cut run, marked
// interrupted, and exits 143.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/run.h"
#include "harness/script_file.h"
#include "harness/sweep/sweep.h"
#include "history/history_io.h"
#include "tests/locksim_binary.h"

namespace locksim::harness {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Long enough for a few polls (one every 2^16 events): a ZooKeeper run has
// a tenth of a Redis run's events a second, Redlock five times as many.
RunConfig long_config(const std::string& algorithm, const std::string& profile,
                      int64_t seconds = 1800) {
  SweepPlan plan;
  plan.base.duration = Duration::seconds(seconds);
  return plan.config_of(algorithm, profile, 7);
}

TEST(RunPoll, APollThatNeverStopsChangesNoByte) {
  const std::pair<const char*, int64_t> runs[] = {
      {"set-nx-lua", 1800}, {"redlock", 300}, {"mysql-center", 600}, {"zk-curator", 7200}};
  for (const auto& [algorithm, seconds] : runs) {
    const RunConfig c = long_config(algorithm, "partition+pause", seconds);
    SCOPED_TRACE(algorithm);
    const SimRunReport plain = simulate_and_check(c);
    int polls = 0;
    TimePoint last{};
    RunExtras extras;
    extras.poll = [&](TimePoint now, uint64_t events) {
      ++polls;
      EXPECT_GE(now, last) << "virtual time as the poll sees it never goes back";
      EXPECT_EQ(events % kPollEveryEvents, 0u);
      last = now;
      return true;
    };
    const SimRunReport polled = simulate_and_check(c, extras);
    EXPECT_GE(polls, 1) << "the run is long enough to be asked";
    EXPECT_EQ(static_cast<uint64_t>(polls), plain.output.events / kPollEveryEvents);
    EXPECT_FALSE(polled.output.stopped);
    EXPECT_EQ(history::to_jsonl(polled.result.history), history::to_jsonl(plain.result.history));
    EXPECT_EQ(polled.result.checks.size(), plain.result.checks.size());
  }
}

TEST(RunPoll, ACutRunIsTheWholeRunUpToTheCut) {
  const RunConfig c = long_config("set-nx-lua", "pause");
  const SimRunReport whole = simulate_and_check(c);
  ASSERT_GE(whole.output.events, 3 * kPollEveryEvents);
  int polls = 0;
  RunExtras extras;
  extras.poll = [&polls](TimePoint, uint64_t) { return ++polls < 3; };
  const SimRunReport cut = simulate_and_check(c, extras);
  EXPECT_TRUE(cut.output.stopped);
  EXPECT_EQ(cut.output.events, 3 * kPollEveryEvents) << "stopped at the third poll";
  EXPECT_LT(cut.result.history.run_length, c.duration);
  EXPECT_GT(cut.result.history.run_length, Duration::zero());
  const std::vector<std::string> a = lines_of(history::to_jsonl(cut.result.history));
  const std::vector<std::string> b = lines_of(history::to_jsonl(whole.result.history));
  ASSERT_FALSE(a.empty());
  ASSERT_LT(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << "op " << i;
  // Every op of the whole run up to the cut is in the cut run's history.
  const int64_t cut_ns = cut.result.history.run_length.ns;
  const auto& ops = whole.result.history.ops;
  EXPECT_GE(ops[a.size()].time_ns, cut_ns) << "the next op comes at or after the cut";
  EXPECT_FALSE(cut.result.checks.empty()) << "what ran is checked";
}

// A lock script that loops costs real time an event: 2^16 such events
// between polls kept a Ctrl-C waiting for minutes. The World now polls after
// each event whose script ran long, and that still changes no byte.
TEST(RunPoll, AnEventWhoseScriptRanLongIsFollowedByAPoll) {
  const locksim::testing::ScratchDir scratch("locksim_run_poll_script_");
  const fs::path file = scratch.write(
      "slow.json",
      R"js({"acquire": {"keys": ["{resource}"], "args": ["{token}", "{ttl_ms}"], "success": "OK",
          "script": "local n = 0 for i = 1, 600000 do n = n + i end )js"
      R"js(return redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])"},
          "release": {"command": ["DEL", "{resource}"], "success": 1}})js");
  install_script_loader();
  RunConfig c;
  c.algorithm = "script:" + file.string();
  c.workload.clients = 2;
  c.duration = Duration::seconds(2);
  const SimRunReport plain = simulate_and_check(c);
  ASSERT_TRUE(plain.result.errors.empty()) << plain.result.errors.front();
  ASSERT_LT(plain.output.events, kPollEveryEvents) << "no poll but for the long scripts";
  std::vector<uint64_t> polled_at;
  RunExtras extras;
  extras.poll = [&polled_at](TimePoint, uint64_t events) {
    polled_at.push_back(events);
    return true;
  };
  const SimRunReport polled = simulate_and_check(c, extras);
  EXPECT_EQ(history::to_jsonl(polled.result.history), history::to_jsonl(plain.result.history));
  // Every acquire attempt runs the loop once: each is followed by a poll.
  size_t attempts = 0;
  for (const history::Op& op : plain.result.history.ops) {
    attempts += op.type == history::OpType::kInvoke && op.f == history::OpF::kAcquire;
  }
  ASSERT_GE(attempts, 2u);
  EXPECT_GE(polled_at.size(), attempts);
  for (size_t i = 1; i < polled_at.size(); ++i) EXPECT_GT(polled_at[i], polled_at[i - 1]);
}

// The command: after its progress line a SIGTERM cuts the run; result.json
// says so first, the history ends at the cut, and the exit is 143.
TEST(RunPoll, SigtermAfterTheProgressLineWritesTheCutRun) {
  const locksim::testing::ScratchDir scratch("locksim_run_poll_");
  const fs::path out = scratch.path() / "out";
  const fs::path err = scratch.path() / "err";
  // Polls the progress line, not the clock: the signal follows the run.
  const std::string cmd = std::string(LOCKSIM_BINARY) +
                          " run --algorithm set-nx-lua --clients 50 --duration 168h --out " +
                          out.string() + " >/dev/null 2>" + err.string() +
                          " & pid=$!; i=0; while ! grep -q 'simulated' " + err.string() +
                          " 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; "
                          "kill -TERM $pid; wait $pid; exit $?";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 143);
  const std::string stderr_text = locksim::testing::slurp(err);
  EXPECT_NE(stderr_text.find(" of 168h simulated ("), std::string::npos) << stderr_text;
  EXPECT_NE(stderr_text.find("run: interrupted (SIGTERM) at "), std::string::npos) << stderr_text;
  const nlohmann::ordered_json r =
      nlohmann::ordered_json::parse(locksim::testing::slurp(out / "result.json"));
  ASSERT_TRUE(r.contains("interrupted")) << r.dump().substr(0, 300);
  EXPECT_EQ(r["interrupted"]["signal"], "SIGTERM");
  EXPECT_EQ(r.begin().key(), "interrupted") << "said first";
  const std::vector<std::string> ops = lines_of(locksim::testing::slurp(out / "history.jsonl"));
  ASSERT_FALSE(ops.empty());
  const int64_t last_ns = nlohmann::json::parse(ops.back())["time_ns"].get<int64_t>();
  EXPECT_LT(last_ns, int64_t{168} * 3600 * 1'000'000'000) << "the run was cut";
}

}  // namespace
}  // namespace locksim::harness
