// The liveness checker on hand-written histories: a lock stuck at the end of
// the run is a finding; a long gap that ends, or one nobody tried to fill, is not.
#include <gtest/gtest.h>

#include "checkers/liveness_checker.h"

namespace locksim::harness {
namespace {

TimePoint sec(int64_t s) {
  return TimePoint{} + Duration::seconds(s);
}

class Script {
 public:
  int64_t op(int64_t t, int client, history::OpType type) {
    history::Op o;
    o.time_ns = sec(t).ns;
    o.process = client;
    o.client = client;
    o.type = type;
    o.f = history::OpF::kAcquire;
    return recorder_.record(o);
  }
  void hold(int client, int64_t from, int64_t to, history::HeldInterval::EndReason why) {
    op(from, client, history::OpType::kInvoke);
    const int64_t ok = op(from, client, history::OpType::kOk);
    recorder_.begin_hold(client, client, sec(from), ok);
    recorder_.end_hold(client, sec(to), -1, why);
  }
  // A hold still open when the run ends.
  void hold_to_end(int client, int64_t from) {
    op(from, client, history::OpType::kInvoke);
    const int64_t ok = op(from, client, history::OpType::kOk);
    recorder_.begin_hold(client, client, sec(from), ok);
  }
  void failed_attempt(int64_t t, int client) {
    op(t, client, history::OpType::kInvoke);
    op(t, client, history::OpType::kFail);
  }
  // A nemesis op (a fault or its end), as the runner records one.
  void fault(int64_t t, const char* f, std::vector<std::string> value) {
    history::Op o = history::nemesis_op(f, std::move(value), "");
    o.time_ns = sec(t).ns;
    recorder_.record(o);
  }
  history::History finish(int64_t end) { return recorder_.finish(sec(end)); }

 private:
  history::HistoryRecorder recorder_;
};

TEST(LivenessChecker, LockUnheldAtTheEndWhileClientsTryIsStuck) {
  Script s;
  s.hold(0, 0, 2, history::HeldInterval::EndReason::kCrash);  // c1 dies holding, key never expires
  for (int64_t t = 3; t < 60; t += 5) s.failed_attempt(t, 1);
  const checkers::LivenessVerdict v = checkers::check_liveness(s.finish(60), Duration::seconds(30));
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kInvalid);
  EXPECT_EQ(v.unheld_since, sec(2));
  EXPECT_EQ(v.unheld_for, Duration::seconds(58));
  EXPECT_EQ(v.failed_attempts, 12);
  EXPECT_EQ(v.last_holder, 0);
  EXPECT_NE(v.explanation.find("c1"), std::string::npos) << v.explanation;
  EXPECT_NE(v.explanation.find("crash"), std::string::npos) << v.explanation;
}

// Jepsen's checkers judge client ops only: faults in the final stretch are
// not failed attempts, and change nothing else either. (The nemesis ops are
// :info, the outcome of a failed acquire attempt.)
TEST(LivenessChecker, NemesisOpsAreNotAttempts) {
  for (const int attempts : {0, 3}) {
    checkers::LivenessVerdict v[2];
    for (const bool faults : {false, true}) {
      Script s;
      if (faults) s.fault(0, "drift", {"c1", "+5000ppm"});
      s.hold(0, 0, 2, history::HeldInterval::EndReason::kCrash);
      if (faults) s.fault(2, "crash", {"c1"});
      for (int64_t k = 0; k < attempts; ++k) s.failed_attempt(10 + k, 1);
      if (faults) {
        for (int64_t t = 20; t < 60; t += 10) s.fault(t, "pause", {"c2", "1s"});
        s.fault(59, "skip", {"crash", "@holder"});
      }
      v[faults] = checkers::check_liveness(s.finish(60), Duration::seconds(30));
    }
    SCOPED_TRACE(attempts);
    EXPECT_EQ(v[1].kind,
              attempts > 0 ? checkers::Verdict::Kind::kInvalid : checkers::Verdict::Kind::kValid);
    EXPECT_EQ(v[1].kind, v[0].kind);
    EXPECT_EQ(v[1].failed_attempts, attempts);
    EXPECT_EQ(v[1].unheld_since, v[0].unheld_since);
    EXPECT_EQ(v[1].unheld_for, v[0].unheld_for);
    EXPECT_EQ(v[1].last_holder, v[0].last_holder);
    EXPECT_EQ(v[1].longest_gap, v[0].longest_gap);
  }
}

TEST(LivenessChecker, ALongGapThatEndsIsDelayNotStuck) {
  Script s;
  s.hold(0, 0, 2, history::HeldInterval::EndReason::kRelease);
  for (int64_t t = 3; t < 45; t += 5) s.failed_attempt(t, 1);
  s.hold(1, 45, 59, history::HeldInterval::EndReason::kRelease);
  const checkers::LivenessVerdict v = checkers::check_liveness(s.finish(60), Duration::seconds(30));
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kValid) << v.explanation;
  EXPECT_EQ(v.longest_gap, Duration::seconds(43));  // reported, not judged
  EXPECT_EQ(v.longest_gap_start, sec(2));
}

TEST(LivenessChecker, NobodyTryingIsNotStuck) {
  Script s;
  s.hold(0, 0, 2, history::HeldInterval::EndReason::kRelease);
  const checkers::LivenessVerdict v = checkers::check_liveness(s.finish(60), Duration::seconds(30));
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kValid);
  EXPECT_EQ(v.failed_attempts, 0);
}

TEST(LivenessChecker, JustUnderTheThresholdIsNotStuck) {
  Script s;
  s.hold(0, 0, 31, history::HeldInterval::EndReason::kRelease);
  s.failed_attempt(40, 1);
  EXPECT_EQ(checkers::check_liveness(s.finish(60), Duration::seconds(30)).kind,
            checkers::Verdict::Kind::kValid);
  Script t;
  t.hold(0, 0, 30, history::HeldInterval::EndReason::kRelease);
  t.failed_attempt(40, 1);
  EXPECT_EQ(checkers::check_liveness(t.finish(60), Duration::seconds(30)).kind,
            checkers::Verdict::Kind::kInvalid);
}

TEST(LivenessChecker, NeverAcquiredAtAllIsStuck) {
  Script s;
  for (int64_t t = 0; t < 60; t += 10) s.failed_attempt(t, 0);
  const checkers::LivenessVerdict v = checkers::check_liveness(s.finish(60), Duration::seconds(30));
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kInvalid);
  EXPECT_EQ(v.last_holder, -1);
  EXPECT_NE(v.explanation.find("Nobody ever acquired it"), std::string::npos);
}

// A holder whose work hung while its process kept the lease alive (Redisson's
// watchdog): held from 1 s to the end, the longest planned hold 5 s, others
// failing throughout. Stuck with its holder from 6 s on.
TEST(LivenessChecker, AHoldPastAnyPlannedOneWhileOthersFailIsStuckHeld) {
  Script s;
  s.hold_to_end(0, 1);
  for (int64_t t = 2; t < 60; t += 5) s.failed_attempt(t, 1);
  const history::History h = s.finish(60);
  const checkers::LivenessVerdict v =
      checkers::check_liveness(h, Duration::seconds(30), Duration::seconds(5));
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kInvalid);
  EXPECT_EQ(v.held_by, 0);
  EXPECT_EQ(v.overdue_since, sec(6));
  EXPECT_EQ(v.failed_attempts, 11);  // those at 7, 12, ... 57 s
  EXPECT_NE(v.explanation.find("stuck with its holder"), std::string::npos) << v.explanation;
  // Without the workload's longest hold (a history from a file) a long hold
  // is not a hung one; and 54 s past a 30 s plan is under stuck-after.
  EXPECT_EQ(checkers::check_liveness(h, Duration::seconds(30)).kind,
            checkers::Verdict::Kind::kValid);
  EXPECT_EQ(checkers::check_liveness(h, Duration::seconds(30), Duration::seconds(30)).kind,
            checkers::Verdict::Kind::kValid);
}

// Redisson's waiters sleep on the holder's release and never fail: an
// acquire still waiting at the end counts as trying.
TEST(LivenessChecker, AWaiterStillWaitingAtTheEndCountsAsTrying) {
  Script s;
  s.hold_to_end(0, 1);
  s.op(2, 1, history::OpType::kInvoke);  // c2 waits to the end
  const checkers::LivenessVerdict v =
      checkers::check_liveness(s.finish(60), Duration::seconds(30), Duration::seconds(5));
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kInvalid) << v.explanation;
  EXPECT_EQ(v.failed_attempts, 0);
  EXPECT_EQ(v.waiting_at_end, 1);
}

// A holder a pause fault still freezes at the end is the pause's story.
TEST(LivenessChecker, AHolderPausedToTheEndIsNotStuckHeld) {
  Script s;
  s.hold_to_end(0, 1);
  s.fault(2, "pause", {"c2,c1", "70s"});
  for (int64_t t = 3; t < 60; t += 5) s.failed_attempt(t, 1);
  const checkers::LivenessVerdict v =
      checkers::check_liveness(s.finish(60), Duration::seconds(30), Duration::seconds(5));
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kValid) << v.explanation;
}

// Somebody else got the lock after the first holder's plan ran out (an
// overlap: the mutual-exclusion checker's matter), so it was not stuck.
TEST(LivenessChecker, ASecondHolderMeansNotStuckHeld) {
  Script s;
  s.hold_to_end(0, 1);
  s.failed_attempt(7, 1);
  s.hold(1, 20, 25, history::HeldInterval::EndReason::kRelease);
  for (int64_t t = 30; t < 60; t += 5) s.failed_attempt(t, 1);
  const checkers::LivenessVerdict v =
      checkers::check_liveness(s.finish(60), Duration::seconds(30), Duration::seconds(5));
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kValid) << v.explanation;
  EXPECT_EQ(v.held_by, -1);
}

}  // namespace
}  // namespace locksim::harness
