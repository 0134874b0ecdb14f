// Faults live in the history, as Jepsen keeps them: every step of the nemesis
// (a fault, its end, a skipped @holder fault) is one :nemesis :info op, at the
// true time the nemesis took it, with its targets and parameters as :value.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "env/parse.h"
#include "faults/fault_schedule.h"
#include "harness/run.h"
#include "history/history_io.h"

namespace locksim::harness {
namespace {

// A nemesis op as the test expects it.
struct Step {
  Duration at;
  std::string f;
  std::vector<std::string> value;
  std::string detail;
};

std::vector<history::Op> nemesis_ops(const history::History& h) {
  std::vector<history::Op> out;
  for (const history::Op& op : h.ops) {
    if (!history::is_client_op(op)) out.push_back(op);
  }
  return out;
}

SimRunReport run_with(const std::vector<std::string>& faults, uint64_t seed = 3) {
  RunConfig c;
  c.algorithm = "set-nx-lua";
  c.seed = seed;
  c.duration = Duration::seconds(20);
  c.workload.clients = 3;
  for (const std::string& f : faults) c.faults.events.push_back(faults::parse_fault(f, "f"));
  return simulate_and_check(c);
}

void expect_steps(const history::History& h, const std::vector<Step>& want) {
  const std::vector<history::Op> got = nemesis_ops(h);
  ASSERT_EQ(got.size(), want.size()) << history::to_jsonl(h);
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(got[i].time_ns, want[i].at.ns);
    EXPECT_EQ(to_string(got[i].f), want[i].f);
    EXPECT_EQ(got[i].value, want[i].value);
    EXPECT_EQ(got[i].detail, want[i].detail);
    EXPECT_EQ(got[i].process, history::kNemesisProcess);
    EXPECT_EQ(got[i].type, history::OpType::kInfo);
    EXPECT_EQ(h.ops[static_cast<size_t>(got[i].index)].index, got[i].index) << "dense, in place";
  }
  // The whole history, nemesis ops included, survives the files.
  EXPECT_EQ(history::to_jsonl(history::parse_jsonl(history::to_jsonl(h))), history::to_jsonl(h));
}

Duration s(int64_t n) {
  return Duration::seconds(n);
}

TEST(NemesisOps, PauseAndResume) {
  const SimRunReport r = run_with({"pause c2 at 3s for 12s"});
  expect_steps(r.result.history,
               {{s(3), "pause", {"c2", "12s"}, ""}, {s(15), "resume", {"c2"}, ""}});
}

TEST(NemesisOps, CrashAndRestartThenCrashForGood) {
  const SimRunReport r = run_with({"crash c3 at 5s for 3s", "crash redis-1 at 10s"});
  const history::History& h = r.result.history;
  expect_steps(h, {{s(5), "crash", {"c3", "3s"}, ""},
                   {s(8), "restart", {"c3"}, ""},
                   {s(10), "crash", {"redis-1"}, ""}});
  // Cause before effect: a crashed client's unfinished op is closed (:info)
  // right after the crash op, at the same instant.
  const int64_t crash_index = nemesis_ops(h)[0].index;
  int closed = 0;
  for (const history::Op& op : h.ops) {
    if (op.detail != "client crashed") continue;
    ++closed;
    EXPECT_EQ(op.client, 2);
    EXPECT_EQ(op.index, crash_index + 1);
    EXPECT_EQ(op.time_ns, s(5).ns);
  }
  EXPECT_EQ(closed, 1) << "with seed 3, c3 is inside an acquire when it crashes";
}

TEST(NemesisOps, PartitionAndItsHealThenAnExplicitHeal) {
  const SimRunReport r = run_with(
      {"partition c1,c3|redis-1 at 12s for 2s", "partition c2|redis-1 at 1s", "heal at 2s"});
  expect_steps(r.result.history, {{s(1), "partition", {"c2", "redis-1"}, ""},
                                  {s(2), "heal", {}, ""},
                                  {s(12), "partition", {"c1,c3", "redis-1", "2s"}, ""},
                                  {s(14), "heal", {"c1,c3", "redis-1"}, ""}});
}

// Did the server answer `client` (an :ok or a :fail) in (from, to]?
bool answered_within(const history::History& h, int client, Duration from, Duration to) {
  for (const history::Op& op : h.ops) {
    const bool answer = op.type == history::OpType::kOk || op.type == history::OpType::kFail;
    if (history::is_client_op(op) && op.client == client && answer && op.time_ns > from.ns &&
        op.time_ns <= to.ns) {
      return true;
    }
  }
  return false;
}

// Two partitions that overlap each end on their own: the first one's end
// must not let c2 through while its own cut (3 s to 8 s) still stands (with
// seed 6 it did, at 6 s, when the end of a partition healed every link).
TEST(NemesisOps, ATimedPartitionRestoresOnlyItsOwnLinks) {
  const SimRunReport r =
      run_with({"partition c1|redis-1 at 1s for 5s", "partition c2|redis-1 at 3s for 5s"}, 6);
  const history::History& h = r.result.history;
  expect_steps(h, {{s(1), "partition", {"c1", "redis-1", "5s"}, ""},
                   {s(3), "partition", {"c2", "redis-1", "5s"}, ""},
                   {s(6), "heal", {"c1", "redis-1"}, ""},
                   {s(8), "heal", {"c2", "redis-1"}, ""}});
  EXPECT_FALSE(answered_within(h, 1, s(3), s(8))) << history::to_jsonl(h);
  EXPECT_TRUE(answered_within(h, 1, s(8), s(20))) << "c2 is answered again after its heal";
  EXPECT_EQ(history::describe_nemesis_op(nemesis_ops(h)[2]), "heal c1|redis-1");
}

// A node paused twice stays paused until the later pause ends: one resume.
TEST(NemesisOps, ASecondPauseExtendsTheFirst) {
  const SimRunReport r = run_with({"pause c2 at 2s for 4s", "pause c2 at 4s for 4s"});
  const history::History& h = r.result.history;
  expect_steps(h, {{s(2), "pause", {"c2", "4s"}, ""},
                   {s(4), "pause", {"c2", "4s"}, ""},
                   {s(8), "resume", {"c2"}, ""}});
  for (const history::Op& op : h.ops) {
    if (!history::is_client_op(op) || op.client != 1) continue;
    EXPECT_FALSE(op.time_ns > s(2).ns && op.time_ns < s(8).ns) << "c2 is frozen: " << op.index;
  }
}

// Two pauses of one node that end at the same instant resume it once. The
// second end used to find no pause left and break an invariant (exit 70):
// `locksim shrink` found it, shortening one pause of a sweep's seed.
TEST(NemesisOps, TwoPausesEndingTogetherResumeOnce) {
  const SimRunReport r = run_with({"pause c2 at 2s for 6s", "pause c2 at 5s for 3s"});
  expect_steps(r.result.history, {{s(2), "pause", {"c2", "6s"}, ""},
                                  {s(5), "pause", {"c2", "3s"}, ""},
                                  {s(8), "resume", {"c2"}, ""}});
}

// Overlapping loss faults: the newest active one's rate holds, and each end
// brings back what the faults still active say (the rate before them last).
TEST(NemesisOps, ALossEndBringsBackTheRateOfTheLossesStillActive) {
  const SimRunReport r =
      run_with({"loss c1|redis-1 at 1s 0.2 for 4s", "loss c1|redis-1 at 2s 0.5 for 5s"});
  expect_steps(r.result.history, {{s(1), "loss", {"c1", "redis-1", "0.2", "4s"}, ""},
                                  {s(2), "loss", {"c1", "redis-1", "0.5", "5s"}, ""},
                                  {s(5), "loss", {"c1", "redis-1", "0.5"}, ""},
                                  {s(7), "loss", {"c1", "redis-1", "0"}, ""}});
}

TEST(NemesisOps, DriftAndJump) {
  const SimRunReport r = run_with({"drift c2 at 1s +50000ppm", "drift c3 at 2s -2000ppm",
                                   "jump redis-1 at 9s +5s", "jump c1 at 4s -5s"});
  expect_steps(r.result.history, {{s(1), "drift", {"c2", "+50000ppm"}, ""},
                                  {s(2), "drift", {"c3", "-2000ppm"}, ""},
                                  {s(4), "jump", {"c1", "-5s"}, ""},
                                  {s(9), "jump", {"redis-1", "+5s"}, ""}});
}

// Did client `client` hold the lock at `t` (the ground truth the nemesis asked)?
bool held_at(const history::History& h, int client, Duration t) {
  const TimePoint at = TimePoint{} + t;
  for (const history::HeldInterval& x : h.held) {
    if (x.client == client && x.start <= at && at < x.end) return true;
  }
  return false;
}

TEST(NemesisOps, HolderFaultsResolvedOrSkipped) {
  // At 0 s nobody can hold the lock yet (an acquire takes a round trip); at
  // 5 s, with this seed, c-someone does.
  const SimRunReport r = run_with({"pause @holder at 0s for 1s", "pause @holder at 5s for 2s"});
  const history::History& h = r.result.history;
  const std::vector<history::Op> ops = nemesis_ops(h);
  ASSERT_EQ(ops.size(), 3u) << history::to_jsonl(h);
  EXPECT_EQ(ops[0].f, history::OpF::kSkip);
  EXPECT_EQ(ops[0].time_ns, 0);
  EXPECT_EQ(ops[0].value, (std::vector<std::string>{"pause", "@holder", "1s"}));
  EXPECT_EQ(ops[0].detail, "nobody holds the lock");
  EXPECT_EQ(history::describe_nemesis_op(ops[0]),
            "skip pause @holder for 1s (nobody holds the lock)");

  ASSERT_EQ(ops[1].f, history::OpF::kPause) << "seed 3 has a holder at 5 s";
  ASSERT_EQ(ops[1].value.size(), 2u);
  const std::string holder = ops[1].value[0];
  EXPECT_EQ(ops[1].value[1], "2s");
  ASSERT_TRUE(holder == "c1" || holder == "c2" || holder == "c3") << holder;
  EXPECT_TRUE(held_at(h, holder[1] - '1', s(5))) << holder << " held the lock at 5 s";
  EXPECT_EQ(ops[2].f, history::OpF::kResume);
  EXPECT_EQ(ops[2].value, (std::vector<std::string>{holder}));
  EXPECT_EQ(ops[2].time_ns, s(7).ns);
}

TEST(NemesisOps, ClientOpsAndCountsDoNotSeeThem) {
  // A fault after the run's end is refused: it would record nothing.
  EXPECT_THROW(run_with({"jump redis-1 at 30s +1s"}), locksim::ConfigError);
  const SimRunReport plain = run_with({});
  EXPECT_TRUE(nemesis_ops(plain.result.history).empty());

  // A fault that changes nothing a client sees (a zero drift) adds exactly
  // one op, and the client ops, counts and verdicts stay as they were.
  const SimRunReport noop = run_with({"drift c1 at 1s +0ppm"});
  const history::History& h = noop.result.history;
  ASSERT_EQ(h.ops.size(), plain.result.history.ops.size() + 1);
  history::History stripped;
  for (const history::Op& op : h.ops) {
    if (!history::is_client_op(op)) continue;
    stripped.ops.push_back(op);
    stripped.ops.back().index = static_cast<int64_t>(stripped.ops.size()) - 1;
  }
  EXPECT_EQ(history::to_jsonl(stripped), history::to_jsonl(plain.result.history));
  EXPECT_EQ(noop.result.client_ops, plain.result.client_ops);
  EXPECT_EQ(noop.result.acquisitions, plain.result.acquisitions);
  EXPECT_EQ(noop.result.releases_info, plain.result.releases_info);
  EXPECT_EQ(noop.result.mutex.kind, plain.result.mutex.kind);
  EXPECT_EQ(noop.result.liveness.kind, plain.result.liveness.kind);
}

}  // namespace
}  // namespace locksim::harness
