// The history's rules, on both sides of the seam: HistoryRules says which rule
// an op breaks; the recorder asserts them (a locksim bug, exit 70), the
// readers turn them into bad input (history_io_test.cpp).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "env/assert.h"
#include "history/history.h"

namespace locksim::harness {
namespace {

history::Op client_op(int64_t index, int64_t time_ns, int64_t process, history::OpType type,
                      history::OpF f) {
  history::Op op;
  op.index = index;
  op.time_ns = time_ns;
  op.process = process;
  op.client = static_cast<int>(process);
  op.type = type;
  op.f = f;
  return op;
}

history::Op fault(int64_t index, int64_t time_ns, const char* f) {
  history::Op op = history::nemesis_op(f, {"c1"}, "");
  op.index = index;
  op.time_ns = time_ns;
  return op;
}

// Admits `ops` in order (each must pass) and returns what `last` breaks.
std::string broken_after(const std::vector<history::Op>& ops, const history::Op& last) {
  history::HistoryRules rules;
  for (const history::Op& op : ops) {
    const std::string b = rules.check(op);
    EXPECT_EQ(b, "") << "op " << op.index;
    rules.admit(op);
  }
  return rules.check(last);
}

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(HistoryRules, AWellFormedHistoryWithFaultsPasses) {
  // c1 acquires, the nemesis pauses it mid-call, the call times out (:info),
  // c1 goes on as process 5; a release fails; then a skip.
  const std::vector<history::Op> ops = {
      client_op(0, 10, 0, history::OpType::kInvoke, history::OpF::kAcquire),
      fault(1, 10, "pause"),
      client_op(2, 20, 1, history::OpType::kInvoke, history::OpF::kAcquire),
      client_op(3, 30, 0, history::OpType::kInfo, history::OpF::kAcquire),
      fault(4, 30, "resume"),
      client_op(5, 40, 5, history::OpType::kInvoke, history::OpF::kAcquire),
      client_op(6, 50, 5, history::OpType::kOk, history::OpF::kAcquire),
      client_op(7, 60, 5, history::OpType::kInvoke, history::OpF::kRelease),
      client_op(8, 70, 5, history::OpType::kFail, history::OpF::kRelease),
      client_op(9, 80, 1, history::OpType::kFail, history::OpF::kAcquire),
  };
  EXPECT_EQ(broken_after(ops, fault(10, 80, "heal")), "");
}

TEST(HistoryRules, EachRuleIsNamed) {
  const history::Op invoke = client_op(0, 10, 0, history::OpType::kInvoke, history::OpF::kAcquire);
  // 1: dense indices, time order.
  EXPECT_TRUE(mentions(
      broken_after({invoke}, client_op(2, 10, 1, history::OpType::kInvoke, history::OpF::kAcquire)),
      "rule 1"));
  EXPECT_TRUE(mentions(
      broken_after({invoke}, client_op(1, 9, 1, history::OpType::kInvoke, history::OpF::kAcquire)),
      "time goes back (9 after 10)"));
  EXPECT_TRUE(mentions(
      broken_after({}, client_op(0, -1, 0, history::OpType::kInvoke, history::OpF::kAcquire)),
      "time -1 is before the run began (rule 1"));
  // 2: who may record what.
  EXPECT_TRUE(mentions(
      broken_after({}, client_op(0, 0, -7, history::OpType::kInvoke, history::OpF::kAcquire)),
      "rule 2: client processes are >= 0"));
  EXPECT_TRUE(
      mentions(broken_after({}, client_op(0, 0, 3, history::OpType::kInfo, history::OpF::kPause)),
               "process 3 records :pause (rule 2"));
  history::Op invoking_nemesis = fault(0, 0, "crash");
  invoking_nemesis.type = history::OpType::kInvoke;
  EXPECT_TRUE(mentions(broken_after({}, invoking_nemesis), "the nemesis records :invoke :crash"));
  history::Op nemesis_acquire = fault(0, 0, "crash");
  nemesis_acquire.f = history::OpF::kAcquire;
  EXPECT_TRUE(mentions(broken_after({}, nemesis_acquire), "rule 2"));
  // 3: one open op per process.
  EXPECT_TRUE(mentions(
      broken_after({invoke}, client_op(1, 11, 0, history::OpType::kInvoke, history::OpF::kRelease)),
      "process 0 invokes :release while its :acquire (op 0) is still open "
      "(rule 3"));
  // 4: a completion matches the open invocation; completed at most once.
  EXPECT_TRUE(mentions(
      broken_after({invoke}, client_op(1, 11, 0, history::OpType::kOk, history::OpF::kRelease)),
      "its open invocation (op 0) is :acquire (rule 4"));
  EXPECT_TRUE(mentions(
      broken_after({invoke, client_op(1, 11, 0, history::OpType::kOk, history::OpF::kAcquire)},
                   client_op(2, 12, 0, history::OpType::kOk, history::OpF::kAcquire)),
      "process 0 completes :acquire without an open invocation (rule 4"));
  // 5: nothing after :info.
  EXPECT_TRUE(mentions(
      broken_after({invoke, client_op(1, 11, 0, history::OpType::kInfo, history::OpF::kAcquire)},
                   client_op(2, 12, 0, history::OpType::kInvoke, history::OpF::kAcquire)),
      "process 0 records again after an :info op (rule 5"));
  // 6: a process is one client's.
  history::Op other_client = client_op(1, 11, 0, history::OpType::kOk, history::OpF::kAcquire);
  other_client.client = 1;
  EXPECT_TRUE(mentions(broken_after({invoke}, other_client),
                       "process 0 is c1's (op 0), but op 1 names c2 (rule 6"));
  // The nemesis records :info again and again: rule 5 is for client processes.
  EXPECT_EQ(broken_after({fault(0, 0, "pause")}, fault(1, 0, "resume")), "");
}

TEST(HistoryRules, NemesisKeywordsMapOntoOpF) {
  for (const char* f :
       {"pause", "resume", "crash", "restart", "partition", "heal", "drift", "jump", "skip"}) {
    const std::optional<history::OpF> op_f = history::op_f_from_string(f);
    ASSERT_TRUE(op_f.has_value()) << f;
    EXPECT_TRUE(history::is_nemesis_f(*op_f)) << f;
    EXPECT_STREQ(to_string(*op_f), f);
  }
  EXPECT_FALSE(history::is_nemesis_f(history::OpF::kAcquire));
  EXPECT_FALSE(history::is_nemesis_f(history::OpF::kRelease));
  EXPECT_FALSE(history::op_f_from_string("lock").has_value());
}

TEST(HistoryRules, NemesisOpsDescribeThemselvesInFaultSyntax) {
  auto text = [](const char* f, std::vector<std::string> v, std::string detail = "") {
    return history::describe_nemesis_op(history::nemesis_op(f, std::move(v), std::move(detail)));
  };
  EXPECT_EQ(text("pause", {"c1", "12s"}), "pause c1 for 12s");
  EXPECT_EQ(text("resume", {"c1"}), "resume c1");
  EXPECT_EQ(text("crash", {"redis-1"}), "crash redis-1");
  EXPECT_EQ(text("crash", {"redis-1", "5s"}), "crash redis-1 for 5s");
  EXPECT_EQ(text("restart", {"redis-1"}), "restart redis-1");
  EXPECT_EQ(text("partition", {"c1,c3", "redis-1"}), "partition c1,c3|redis-1");
  EXPECT_EQ(text("partition", {"c1", "redis-1", "10s"}), "partition c1|redis-1 for 10s");
  EXPECT_EQ(text("heal", {}), "heal");
  EXPECT_EQ(text("drift", {"c4", "-2000ppm"}), "drift c4 -2000ppm");
  EXPECT_EQ(text("jump", {"redis-1", "+20s"}), "jump redis-1 +20s");
  EXPECT_EQ(text("skip", {"partition", "@holder", "redis-1", "1s"}, "nobody holds the lock"),
            "skip partition @holder|redis-1 for 1s (nobody holds the lock)");
  // A foreign history may leave parts out: described, never thrown on.
  EXPECT_EQ(text("pause", {}), "pause ? for ?");
  EXPECT_EQ(text("skip", {"bogus"}), "skip bogus");
}

// The recorder side: a broken rule is a locksim bug, so it stops the program
// with the invariant exit code and the rule in the message.
using HistoryRecorderDeathTest = ::testing::Test;

const auto kInvariant = ::testing::ExitedWithCode(kExitInvariant);

TEST_F(HistoryRecorderDeathTest, TimeGoingBackIsABug) {
  history::HistoryRecorder r;
  r.record(client_op(0, 10, 0, history::OpType::kInvoke, history::OpF::kAcquire));
  EXPECT_EXIT(r.record(client_op(0, 9, 1, history::OpType::kInvoke, history::OpF::kAcquire)),
              kInvariant, "invariant broken.*time goes back.*rule 1");
}

TEST_F(HistoryRecorderDeathTest, TwoOpenOpsInOneProcessAreABug) {
  history::HistoryRecorder r;
  r.record(client_op(0, 10, 0, history::OpType::kInvoke, history::OpF::kAcquire));
  EXPECT_EXIT(r.record(client_op(0, 11, 0, history::OpType::kInvoke, history::OpF::kAcquire)),
              kInvariant, "rule 3: at most one open op per process");
}

TEST_F(HistoryRecorderDeathTest, CompletingTwiceOrTheWrongOpIsABug) {
  history::HistoryRecorder r;
  r.record(client_op(0, 10, 0, history::OpType::kInvoke, history::OpF::kAcquire));
  EXPECT_EXIT(r.record(client_op(0, 11, 0, history::OpType::kOk, history::OpF::kRelease)),
              kInvariant, "its open invocation \\(op 0\\) is :acquire \\(rule 4");
  r.record(client_op(0, 11, 0, history::OpType::kOk, history::OpF::kAcquire));
  EXPECT_EXIT(r.record(client_op(0, 12, 0, history::OpType::kOk, history::OpF::kAcquire)),
              kInvariant, "without an open invocation \\(rule 4");
}

TEST_F(HistoryRecorderDeathTest, RecordingAfterInfoIsABug) {
  history::HistoryRecorder r;
  r.record(client_op(0, 10, 0, history::OpType::kInvoke, history::OpF::kAcquire));
  r.record(client_op(0, 11, 0, history::OpType::kInfo, history::OpF::kAcquire));
  EXPECT_EXIT(r.record(client_op(0, 12, 0, history::OpType::kInvoke, history::OpF::kAcquire)),
              kInvariant, "rule 5");
}

TEST_F(HistoryRecorderDeathTest, MalformedNemesisOpsAreABug) {
  history::HistoryRecorder r;
  EXPECT_EXIT(history::nemesis_op("lock", {}, ""), kInvariant, "keywords OpF lists as nemesis ops");
  EXPECT_EXIT(history::nemesis_op("acquire", {}, ""), kInvariant,
              "keywords OpF lists as nemesis ops");
  history::Op o = fault(0, 0, "pause");
  o.type = history::OpType::kOk;
  EXPECT_EXIT(r.record(o), kInvariant, "rule 2");
}

TEST_F(HistoryRecorderDeathTest, HeldIntervalsAreOnePerClientAndNeverBackwards) {
  history::HistoryRecorder r;
  r.record(client_op(0, 10, 0, history::OpType::kInvoke, history::OpF::kAcquire));
  const int64_t ok = r.record(client_op(0, 20, 0, history::OpType::kOk, history::OpF::kAcquire));
  // A hold must begin with its own acquire :ok, at its time.
  EXPECT_EXIT(r.begin_hold(0, 0, TimePoint{25}, ok), kInvariant,
              "a hold begins with its client's acquire :ok op");
  EXPECT_EXIT(r.begin_hold(1, 1, TimePoint{20}, ok), kInvariant,
              "a hold begins with its client's acquire :ok op");
  EXPECT_EXIT(r.begin_hold(0, 0, TimePoint{20}, 0), kInvariant,
              "a hold begins with its client's acquire :ok op");
  r.begin_hold(0, 0, TimePoint{20}, ok);
  EXPECT_EXIT(r.begin_hold(0, 0, TimePoint{20}, ok), kInvariant,
              "a client holds at most one lease at a time");
  EXPECT_EXIT(r.end_hold(0, TimePoint{19}, -1, history::HeldInterval::EndReason::kCrash),
              kInvariant, "a held interval does not end before it starts");
  EXPECT_EXIT(r.finish(TimePoint{19}), kInvariant, "the run ends after its last op");
  r.end_hold(0, TimePoint{20}, -1, history::HeldInterval::EndReason::kCrash);  // empty, but fine
  EXPECT_EQ(r.finish(TimePoint{30}).held.size(), 1u);
}

}  // namespace
}  // namespace locksim::harness
