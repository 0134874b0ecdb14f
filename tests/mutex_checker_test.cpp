// The mutual-exclusion checker on hand-written histories, and against an
// O(n^2) brute force on large random ones.
#include "checkers/mutex_checker.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "history/history.h"
#include "sim/rng.h"

namespace locksim::harness {
namespace {

TimePoint at_ms(int64_t ms) {
  return TimePoint{} + Duration::millis(ms);
}

history::HeldInterval held(int client, int64_t start_ns, int64_t end_ns, int64_t acquire_index) {
  history::HeldInterval h;
  h.client = client;
  h.process = client;
  h.start = TimePoint{start_ns};
  h.end = TimePoint{end_ns};
  h.acquire_index = acquire_index;
  h.release_index = acquire_index + 1;
  return h;
}

// Records ops the way the workload loop does: acquire :ok opens the client's
// held interval, release :invoke closes it, an :info op retires the process.
class Script {
 public:
  int64_t op(int64_t ms, int client, history::OpType type, history::OpF f, std::string detail = "") {
    if (static_cast<size_t>(client) >= process_.size()) process_.resize(client + 1, -1);
    if (process_[client] < 0) process_[client] = next_process_++;
    history::Op o;
    o.time_ns = at_ms(ms).ns;
    o.process = process_[client];
    o.type = type;
    o.f = f;
    o.client = client;
    o.detail = std::move(detail);
    const int64_t index = recorder_.record(o);
    if (f == history::OpF::kAcquire && type == history::OpType::kOk) {
      recorder_.begin_hold(client, o.process, at_ms(ms), index);
    }
    if (f == history::OpF::kRelease && type == history::OpType::kInvoke) {
      recorder_.end_hold(client, at_ms(ms), index, history::HeldInterval::EndReason::kRelease);
    }
    if (type == history::OpType::kInfo) process_[client] = -1;  // Jepsen: a fresh process next time
    return index;
  }
  int64_t invoke_acquire(int64_t ms, int c) { return op(ms, c, history::OpType::kInvoke, history::OpF::kAcquire); }
  int64_t acquired(int64_t ms, int c) { return op(ms, c, history::OpType::kOk, history::OpF::kAcquire); }
  int64_t invoke_release(int64_t ms, int c) { return op(ms, c, history::OpType::kInvoke, history::OpF::kRelease); }
  int64_t released(int64_t ms, int c) { return op(ms, c, history::OpType::kOk, history::OpF::kRelease); }
  void crash(int64_t ms, int c) {
    recorder_.end_hold(c, at_ms(ms), -1, history::HeldInterval::EndReason::kCrash);
  }
  // A nemesis op (a fault or its end), as the runner records one.
  void fault(int64_t ms, const char* f, std::vector<std::string> value) {
    history::Op o = history::nemesis_op(f, std::move(value), "");
    o.time_ns = at_ms(ms).ns;
    recorder_.record(o);
  }
  history::History finish(int64_t ms) { return recorder_.finish(at_ms(ms)); }

 private:
  history::HistoryRecorder recorder_;
  std::vector<int64_t> process_;
  int64_t next_process_ = 0;
};

TEST(MutexChecker, EmptyHistoryIsValid) {
  const checkers::Verdict v = checkers::check_mutex(history::History{});
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kValid);
  EXPECT_EQ(v.checker, "mutual-exclusion");
  EXPECT_TRUE(v.overlaps.empty());
  EXPECT_FALSE(v.explanation.empty());
}

TEST(MutexChecker, SequentialHoldersAreValid) {
  Script s;
  s.invoke_acquire(0, 0);
  s.acquired(10, 0);
  s.invoke_acquire(15, 1);
  s.invoke_release(40, 0);
  s.released(41, 0);
  s.acquired(45, 1);
  s.invoke_release(70, 1);
  s.released(71, 1);
  const history::History h = s.finish(100);
  ASSERT_EQ(h.held.size(), 2u);
  const checkers::Verdict v = checkers::check_mutex(h);
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kValid);
  EXPECT_TRUE(v.overlaps.empty());
  EXPECT_NE(v.explanation.find("2 held intervals"), std::string::npos) << v.explanation;
}

TEST(MutexChecker, OverlapReportsBothOpsAndExactWindow) {
  Script s;
  s.invoke_acquire(0, 0);                         // 0
  const int64_t a_ok = s.acquired(10, 0);         // 1
  s.invoke_acquire(20, 1);                        // 2
  const int64_t b_ok = s.acquired(30, 1);         // 3
  const int64_t a_rel = s.invoke_release(50, 0);  // 4
  s.released(51, 0);                              // 5
  const int64_t b_rel = s.invoke_release(80, 1);  // 6
  s.released(81, 1);                              // 7
  const checkers::Verdict v = checkers::check_mutex(s.finish(100));

  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kInvalid);
  ASSERT_EQ(v.overlaps.size(), 1u);
  const checkers::Overlap& o = v.overlaps[0];
  EXPECT_EQ(o.a.client, 0);
  EXPECT_EQ(o.a.acquire_index, a_ok);
  EXPECT_EQ(o.a.release_index, a_rel);
  EXPECT_EQ(o.b.client, 1);
  EXPECT_EQ(o.b.acquire_index, b_ok);
  EXPECT_EQ(o.b.release_index, b_rel);
  EXPECT_EQ(o.window_start, at_ms(30));
  EXPECT_EQ(o.window_end, at_ms(50));
  EXPECT_EQ(v.explanation,
            "Mutual exclusion was violated: 1 overlapping pair among 2 held intervals. The first: "
            "c1 (process 0) held the lock from 0.010s (acquire op 1) until 0.050s (release "
            "op 4), and c2 (process 1) acquired it at 0.030s (acquire op 3) while c1 "
            "still held it, so both held it in [0.030s, 0.050s) for 0.020s.");
}

// Jepsen's checkers judge client ops only; faults interleaved anywhere (even
// between an invocation and its completion) change no verdict and no window.
TEST(MutexChecker, NemesisOpsChangeNothing) {
  for (const bool faults : {false, true}) {
    Script s;
    auto fault = [&](int64_t ms, const char* f, std::vector<std::string> v) {
      if (faults) s.fault(ms, f, std::move(v));
    };
    fault(0, "partition", {"c1", "redis-1"});
    s.invoke_acquire(0, 0);
    fault(5, "heal", {});
    s.acquired(10, 0);
    s.invoke_acquire(20, 1);
    fault(25, "pause", {"c1", "40ms"});
    s.acquired(30, 1);
    s.invoke_release(50, 0);
    s.released(51, 0);
    fault(65, "resume", {"c1"});
    s.invoke_release(80, 1);
    fault(80, "crash", {"c2"});
    s.released(81, 1);
    const history::History h = s.finish(100);
    ASSERT_EQ(h.ops.size(), faults ? 13u : 8u);
    const checkers::Verdict v = checkers::check_mutex(h);
    SCOPED_TRACE(faults ? "with nemesis ops" : "without");
    EXPECT_EQ(v.kind, checkers::Verdict::Kind::kInvalid);
    ASSERT_EQ(v.overlaps.size(), 1u);
    EXPECT_EQ(v.overlaps[0].a.client, 0);
    EXPECT_EQ(v.overlaps[0].b.client, 1);
    EXPECT_EQ(v.overlaps[0].window_start, at_ms(30));
    EXPECT_EQ(v.overlaps[0].window_end, at_ms(50));
    // The explanation names op indices, which count nemesis ops too (one
    // index space for the whole history, as in Jepsen).
    EXPECT_NE(v.explanation.find(faults ? "(acquire op 3)" : "(acquire op 1)"), std::string::npos)
        << v.explanation;
  }
}

TEST(MutexChecker, TouchingIntervalsDoNotOverlap) {
  Script s;
  s.invoke_acquire(0, 0);
  s.acquired(10, 0);
  s.invoke_acquire(20, 1);
  s.invoke_release(50, 0);  // c0's interval is [10, 50)
  s.acquired(50, 1);        // c1's starts at 50: a hand-over, not an overlap
  s.released(50, 0);
  s.invoke_release(60, 1);
  s.released(61, 1);
  const checkers::Verdict v = checkers::check_mutex(s.finish(100));
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kValid);
  EXPECT_TRUE(v.overlaps.empty());
}

TEST(MutexChecker, OneNanosecondOverlapIsCaught) {
  history::History h;
  h.held.push_back(held(0, 100, 201, 1));
  h.held.push_back(held(1, 200, 300, 3));
  const checkers::Verdict v = checkers::check_mutex(h);
  ASSERT_EQ(v.overlaps.size(), 1u);
  EXPECT_EQ(v.overlaps[0].window_start, TimePoint{200});
  EXPECT_EQ(v.overlaps[0].window_end, TimePoint{201});
  EXPECT_NE(v.explanation.find("for 1ns"), std::string::npos) << v.explanation;
}

TEST(MutexChecker, ThreeWayOverlapReportsThreePairsInOrder) {
  Script s;
  s.invoke_acquire(0, 0);
  s.invoke_acquire(0, 1);
  s.invoke_acquire(0, 2);
  const int64_t ok0 = s.acquired(10, 0);  // [10, 100)
  const int64_t ok1 = s.acquired(20, 1);  // [20, 60)
  const int64_t ok2 = s.acquired(30, 2);  // [30, 80)
  s.invoke_release(60, 1);
  s.invoke_release(80, 2);
  s.invoke_release(100, 0);
  const checkers::Verdict v = checkers::check_mutex(s.finish(200));

  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kInvalid);
  ASSERT_EQ(v.overlaps.size(), 3u);
  // By window start, then acquire indices.
  EXPECT_EQ(v.overlaps[0].a.acquire_index, ok0);
  EXPECT_EQ(v.overlaps[0].b.acquire_index, ok1);
  EXPECT_EQ(v.overlaps[0].window_start, at_ms(20));
  EXPECT_EQ(v.overlaps[0].window_end, at_ms(60));
  EXPECT_EQ(v.overlaps[1].a.acquire_index, ok0);
  EXPECT_EQ(v.overlaps[1].b.acquire_index, ok2);
  EXPECT_EQ(v.overlaps[1].window_start, at_ms(30));
  EXPECT_EQ(v.overlaps[1].window_end, at_ms(80));
  EXPECT_EQ(v.overlaps[2].a.acquire_index, ok1);
  EXPECT_EQ(v.overlaps[2].b.acquire_index, ok2);
  EXPECT_EQ(v.overlaps[2].window_start, at_ms(30));
  EXPECT_EQ(v.overlaps[2].window_end, at_ms(60));
  EXPECT_NE(v.explanation.find("2 more overlapping pairs follow; clients involved: c1, c2, c3."),
            std::string::npos)
      << v.explanation;
}

TEST(MutexChecker, FailAndInfoOpsCreateNoIntervals) {
  Script s;
  s.invoke_acquire(0, 0);                                          // 0, process 0
  s.op(5, 0, history::OpType::kFail, history::OpF::kAcquire, "quorum not reached");  // 1
  s.invoke_acquire(6, 1);                                          // 2, process 1
  // Timed out: the lock may or may not be held on the servers, but client 1
  // does not believe it holds it, so there is no interval.
  s.op(20, 1, history::OpType::kInfo, history::OpF::kAcquire, "timeout");          // 3
  s.invoke_acquire(21, 2);                                       // 4, process 2
  s.acquired(25, 2);                                             // 5: client 2 holds [25, 40)
  s.invoke_acquire(30, 1);                                       // 6, client 1 as process 3
  s.op(35, 1, history::OpType::kFail, history::OpF::kAcquire, "held by another");  // 7
  s.invoke_release(40, 2);                                       // 8
  s.op(45, 2, history::OpType::kInfo, history::OpF::kRelease, "timeout");          // 9
  s.invoke_acquire(46, 1);                                       // 10
  s.acquired(50, 1);                                             // 11: client 1 holds [50, 60)
  s.invoke_release(60, 1);                                       // 12
  s.op(61, 1, history::OpType::kFail, history::OpF::kRelease, "not the owner");    // 13
  const history::History h = s.finish(100);

  ASSERT_EQ(h.ops.size(), 14u);
  EXPECT_EQ(h.ops[6].process, 3) << "the :info op retired client 1's process 1";
  ASSERT_EQ(h.held.size(), 2u);
  const checkers::Verdict v = checkers::check_mutex(h);
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kValid) << v.explanation;
  EXPECT_TRUE(v.overlaps.empty());
}

TEST(MutexChecker, NeverReleasedLockHeldUntilRunEndOverlapsLaterHolder) {
  Script s;
  s.invoke_acquire(0, 0);
  const int64_t ok0 = s.acquired(10, 0);  // client 0 never releases (a stuck or paused client)
  s.invoke_acquire(500, 1);
  const int64_t ok1 = s.acquired(510, 1);
  const int64_t rel1 = s.invoke_release(600, 1);
  s.released(601, 1);
  const history::History h = s.finish(1000);

  ASSERT_EQ(h.held.size(), 2u);
  const history::HeldInterval& stuck = h.held[1];  // closed last, by finish()
  EXPECT_EQ(stuck.client, 0);
  EXPECT_EQ(stuck.end, at_ms(1000));
  EXPECT_EQ(stuck.end_reason, history::HeldInterval::EndReason::kRunEnd);
  EXPECT_EQ(stuck.release_index, -1);

  const checkers::Verdict v = checkers::check_mutex(h);
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kInvalid);
  ASSERT_EQ(v.overlaps.size(), 1u);
  EXPECT_EQ(v.overlaps[0].a.acquire_index, ok0);
  EXPECT_EQ(v.overlaps[0].a.end_reason, history::HeldInterval::EndReason::kRunEnd);
  EXPECT_EQ(v.overlaps[0].b.acquire_index, ok1);
  EXPECT_EQ(v.overlaps[0].b.release_index, rel1);
  EXPECT_EQ(v.overlaps[0].window_start, at_ms(510));
  EXPECT_EQ(v.overlaps[0].window_end, at_ms(600));
  EXPECT_NE(v.explanation.find("until the run ended at 1.000s, never released"), std::string::npos)
      << v.explanation;
}

TEST(MutexChecker, CrashedHolderStopsHoldingAtTheCrash) {
  Script s;
  s.invoke_acquire(0, 0);
  s.acquired(10, 0);
  s.invoke_acquire(40, 1);
  s.crash(50, 0);  // client 0: [10, 50)
  s.acquired(60, 1);
  const checkers::Verdict v = checkers::check_mutex(s.finish(100));
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kValid) << v.explanation;
}

TEST(MutexChecker, ZeroLengthIntervalOverlapsNothing) {
  Script s;
  s.invoke_acquire(0, 1);
  s.acquired(5, 1);  // client 1: [5, 20)
  s.invoke_acquire(8, 0);
  s.acquired(10, 0);
  s.invoke_release(10, 0);  // client 0: [10, 10), released the instant it acquired
  s.invoke_release(20, 1);
  const history::History h = s.finish(100);
  ASSERT_EQ(h.held.size(), 2u);
  EXPECT_EQ(checkers::check_mutex(h).kind, checkers::Verdict::Kind::kValid);

  // Also at the very start of another interval, where the sweep meets it first.
  history::History z;
  z.held.push_back(held(0, 100, 100, 0));
  z.held.push_back(held(1, 100, 200, 2));
  z.held.push_back(held(2, 150, 150, 4));
  EXPECT_EQ(checkers::check_mutex(z).kind, checkers::Verdict::Kind::kValid);
}

TEST(MutexChecker, IntervalEndingBeforeItStartsIsUnknown) {
  history::History h;
  h.held.push_back(held(0, 100, 50, 0));
  h.held.push_back(held(1, 200, 300, 2));
  const checkers::Verdict v = checkers::check_mutex(h);
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kUnknown);
  EXPECT_NE(v.explanation.find("end before they start"), std::string::npos) << v.explanation;

  // A proven overlap elsewhere still makes it invalid.
  h.held.push_back(held(2, 250, 260, 4));
  EXPECT_EQ(checkers::check_mutex(h).kind, checkers::Verdict::Kind::kInvalid);
}

// (a acquire index, b acquire index, window start, window end): the identity
// of an overlap, for comparing against the brute force.
using PairKey = std::tuple<int64_t, int64_t, int64_t, int64_t>;

std::vector<PairKey> brute_force(const std::vector<history::HeldInterval>& held) {
  std::vector<PairKey> out;
  for (size_t i = 0; i < held.size(); ++i) {
    for (size_t j = i + 1; j < held.size(); ++j) {
      const history::HeldInterval* a = &held[i];
      const history::HeldInterval* b = &held[j];
      if (a->start == a->end || b->start == b->end) continue;
      const int64_t lo = std::max(a->start.ns, b->start.ns);
      const int64_t hi = std::min(a->end.ns, b->end.ns);
      if (lo >= hi) continue;
      if (std::tie(b->start.ns, b->acquire_index) < std::tie(a->start.ns, a->acquire_index)) {
        std::swap(a, b);
      }
      out.emplace_back(a->acquire_index, b->acquire_index, lo, hi);
    }
  }
  std::sort(out.begin(), out.end(), [](const PairKey& x, const PairKey& y) {
    return std::tie(std::get<2>(x), std::get<0>(x), std::get<1>(x)) <
           std::tie(std::get<2>(y), std::get<0>(y), std::get<1>(y));
  });
  return out;
}

std::vector<PairKey> keys(const checkers::Verdict& v) {
  std::vector<PairKey> out;
  for (const checkers::Overlap& o : v.overlaps) {
    EXPECT_LE(o.a.start, o.b.start);
    out.emplace_back(o.a.acquire_index, o.b.acquire_index, o.window_start.ns, o.window_end.ns);
  }
  return out;
}

TEST(MutexChecker, MatchesBruteForceOnRandomHistories) {
  sim::Rng root(20240601);
  for (int round = 0; round < 30; ++round) {
    sim::Rng rng = root.split("round");
    const int n = round == 0 ? 3000 : static_cast<int>(rng.between(0, 300));
    const int64_t span = rng.between(1, 20000);
    history::History h;
    for (int i = 0; i < n; ++i) {
      history::HeldInterval x;
      x.client = i;
      x.process = i;
      // Coarse grid so that touching ends, equal starts and zero lengths all
      // turn up often.
      x.start = TimePoint{rng.between(0, span) * 10};
      x.end = x.start + Duration{rng.chance(0.1) ? 0 : rng.between(0, 40) * 10};
      x.acquire_index = 2 * i;
      x.release_index = 2 * i + 1;
      h.held.push_back(x);
    }
    const checkers::Verdict v = checkers::check_mutex(h);
    const std::vector<PairKey> expected = brute_force(h.held);
    ASSERT_EQ(keys(v), expected) << "round " << round;
    EXPECT_EQ(v.kind, expected.empty() ? checkers::Verdict::Kind::kValid : checkers::Verdict::Kind::kInvalid);
    if (round == 0) {
      EXPECT_GT(expected.size(), 100u) << "the big round should be dense";
    }

    // The input order must not leak into the output.
    std::vector<history::HeldInterval> shuffled = h.held;
    for (size_t i = shuffled.size(); i > 1; --i) std::swap(shuffled[i - 1], shuffled[rng.below(i)]);
    history::History h2;
    h2.held = shuffled;
    const checkers::Verdict v2 = checkers::check_mutex(h2);
    EXPECT_EQ(keys(v2), expected);
    EXPECT_EQ(v2.explanation, v.explanation);
  }
}

}  // namespace
}  // namespace locksim::harness
