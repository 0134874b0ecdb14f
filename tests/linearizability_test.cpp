// The built-in linearizability checker: hand-written histories for each rule
// of the mutex models, Jepsen's history rules, and the greedy against a
// brute-force search over all orderings of thousands of small random
// histories (the proof in linearizability.cpp, checked).
#include "checkers/linearizability.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lock_history_gen.h"

namespace locksim::harness {
namespace {

// Builds a history op by op: h.inv(p, f), h.ok(p, f), ...
struct H {
  std::vector<history::Op> ops;
  H& add(int64_t process, history::OpType type, history::OpF f) {
    history::Op op;
    op.index = static_cast<int64_t>(ops.size());
    op.time_ns = (op.index + 1) * 1'000'000;
    op.process = process;
    op.client = process == history::kNemesisProcess ? -1 : static_cast<int>(process % 10);
    op.type = type;
    op.f = f;
    ops.push_back(op);
    return *this;
  }
  H& inv(int64_t p, history::OpF f) { return add(p, history::OpType::kInvoke, f); }
  H& ok(int64_t p, history::OpF f) { return add(p, history::OpType::kOk, f); }
  H& fail(int64_t p, history::OpF f) { return add(p, history::OpType::kFail, f); }
  H& info(int64_t p, history::OpF f) { return add(p, history::OpType::kInfo, f); }
  H& call(int64_t p, history::OpF f, history::OpType t = history::OpType::kOk) {
    return inv(p, f).add(p, t, f);
  }
  H& nemesis() {
    return add(history::kNemesisProcess, history::OpType::kInfo, history::OpF::kPause);
  }
};

constexpr history::OpF A = history::OpF::kAcquire;
constexpr history::OpF R = history::OpF::kRelease;
constexpr checkers::MutexModel kMutex = checkers::MutexModel::kMutex;
constexpr checkers::MutexModel kOwner = checkers::MutexModel::kOwnerMutex;

checkers::Verdict::Kind check(const H& h, checkers::MutexModel m = kMutex) {
  return checkers::check_linearizable(h.ops, m).kind;
}

constexpr checkers::Verdict::Kind kValid = checkers::Verdict::Kind::kValid;
constexpr checkers::Verdict::Kind kInvalid = checkers::Verdict::Kind::kInvalid;

TEST(Linearizability, EmptyAndSequentialHistoriesAreValid) {
  EXPECT_EQ(check(H{}), kValid);
  EXPECT_EQ(check(H{}.call(0, A).call(0, R).call(1, A).call(1, R)), kValid);
}

TEST(Linearizability, TwoAcquiresWithoutARelease) {
  const H h = H{}.call(0, A).call(1, A);
  const auto v = checkers::check_linearizable(h.ops);
  EXPECT_EQ(v.kind, kInvalid);
  ASSERT_TRUE(v.unlinearizable && v.state_from);
  EXPECT_EQ(v.unlinearizable->process, 1);
  EXPECT_EQ(v.unlinearizable->complete_index, 3);
  EXPECT_EQ(v.state_from->process, 0);
  EXPECT_EQ(v.prefix_end_index, 3);
  EXPECT_EQ(v.prefix_ops, 4);
  EXPECT_NE(v.explanation.find("c2 (process 1) acquired the lock"), std::string::npos)
      << v.explanation;
  EXPECT_NE(v.explanation.find("while c1 (process 0) still held it"), std::string::npos);
  EXPECT_NE(v.explanation.find("shortest prefix"), std::string::npos);
}

// Under owner-mutex a release by a process that never acquired is wrong
// whatever state the lock was in: the reason says so, rather than "nobody
// could have held it" beside another process's :info acquire (a QA pass
// found that), or "already free" beside another's later :info acquire.
TEST(Linearizability, OwnerMutexNamesAReleaserThatNeverAcquired) {
  const auto info_held =
      checkers::check_linearizable(H{}.call(0, A, history::OpType::kInfo).call(1, R).ops, kOwner);
  EXPECT_EQ(info_held.kind, kInvalid);
  EXPECT_NE(info_held.explanation.find(
                "process 1) released the lock (release op 2, :ok at op 3 at 0.004s) but never "
                "held it: it invoked no acquire that could have granted it before op 3"),
            std::string::npos)
      << info_held.explanation;
  const auto later_info = checkers::check_linearizable(
      H{}.call(0, A).call(0, R).call(2, A, history::OpType::kInfo).call(1, R).ops, kOwner);
  EXPECT_NE(later_info.explanation.find("never held it"), std::string::npos)
      << later_info.explanation;
  // Its pair: a release by a process whose own acquire failed never held it
  // either; one whose acquire may have happened is read by the lock's state.
  const auto failed =
      checkers::check_linearizable(H{}.call(1, A, history::OpType::kFail).call(1, R).ops, kOwner);
  EXPECT_NE(failed.explanation.find("never held it"), std::string::npos) << failed.explanation;
  const auto twice = checkers::check_linearizable(H{}.call(1, A).call(1, R).call(1, R).ops, kOwner);
  EXPECT_NE(twice.explanation.find("already free"), std::string::npos) << twice.explanation;
}

TEST(Linearizability, ReleaseOfAFreeLock) {
  const auto v = checkers::check_linearizable(H{}.call(0, R).ops);
  EXPECT_EQ(v.kind, kInvalid);
  EXPECT_NE(v.explanation.find("nobody could have held it"), std::string::npos) << v.explanation;
  const auto w = checkers::check_linearizable(H{}.call(0, A).call(0, R).call(1, R).ops);
  EXPECT_EQ(w.kind, kInvalid);
  EXPECT_NE(w.explanation.find("already free"), std::string::npos) << w.explanation;
}

TEST(Linearizability, ConcurrentOpsMayBeReordered) {
  // p1's acquire is invoked before p0's release completes: it may come after it.
  EXPECT_EQ(check(H{}.call(0, A).inv(0, R).inv(1, A).ok(1, A).ok(0, R)), kValid);
  // ...but not when p1's acquire completed before p0's release was invoked.
  EXPECT_EQ(check(H{}.call(0, A).inv(1, A).ok(1, A).call(0, R)), kInvalid);
}

TEST(Linearizability, FailedOpsNeverHappened) {
  EXPECT_EQ(check(H{}.call(0, A).call(1, A, history::OpType::kFail).call(0, R)), kValid);
  EXPECT_EQ(check(H{}.call(0, A).call(0, R, history::OpType::kFail).call(1, A)), kInvalid);
}

TEST(Linearizability, InfoOpsMayHappenAnyTimeAfterInvocationOrNever) {
  // An :info release frees the lock at some time after its invocation...
  EXPECT_EQ(check(H{}.call(0, A).call(0, R, history::OpType::kInfo).call(1, A)), kValid);
  // ...but not before it: p1 acquired before p0 even invoked its release.
  EXPECT_EQ(check(H{}.call(0, A).call(1, A).call(0, R, history::OpType::kInfo)), kInvalid);
  // An :info acquire may never have happened.
  EXPECT_EQ(check(H{}.call(0, A, history::OpType::kInfo).call(1, A).call(1, R)), kValid);
  // An op left open at the end is read like :info.
  EXPECT_EQ(check(H{}.call(0, A).inv(0, R).call(1, A)), kValid);
  // An :info acquire may be what a later :ok release released.
  EXPECT_EQ(check(H{}.call(0, A, history::OpType::kInfo).call(1, R)), kValid);
}

TEST(Linearizability, NemesisOpsAreSkipped) {
  EXPECT_EQ(check(H{}.nemesis().call(0, A).nemesis().call(0, R).nemesis()), kValid);
  const auto v = checkers::check_linearizable(H{}.nemesis().call(0, A).nemesis().call(1, A).ops);
  EXPECT_EQ(v.kind, kInvalid);
  EXPECT_EQ(v.client_ops, 4);
  EXPECT_EQ(v.prefix_end_index, 5);
  // The prefix is the file's first 6 ops; 4 of them are client ops, which
  // is what a run's history (nemesis ops in it) and a checked file (skipped
  // by its reader) must both say.
  EXPECT_EQ(v.prefix_ops, 4);
}

TEST(Linearizability, OwnerMutexOnlyTheHolderReleases) {
  const H other_releases = H{}.call(0, A).call(1, R).call(2, A);
  EXPECT_EQ(check(other_releases, kMutex), kValid);
  const auto v = checkers::check_linearizable(other_releases.ops, kOwner);
  EXPECT_EQ(v.kind, kInvalid);
  EXPECT_NE(v.explanation.find("did not hold it"), std::string::npos) << v.explanation;
  EXPECT_EQ(check(H{}.call(0, A).call(0, R).call(1, A).call(1, R), kOwner), kValid);
  // The holder's :info release may have freed it.
  EXPECT_EQ(check(H{}.call(0, A).call(0, R, history::OpType::kInfo).call(1, A), kOwner), kValid);
  // An :info acquire never frees anything, and p1's release cannot free p0's lock.
  EXPECT_EQ(check(H{}.call(0, A, history::OpType::kInfo).call(1, R), kOwner), kInvalid);
}

TEST(Linearizability, LockSimsLeaseEncodingReadsRight) {
  // getset-clock-skew seed 3, before and after the encoding of docs/explanation/checkers.md "The
  // history encoding": c2's lease ran out by its own clock, it gave the
  // release up, and later acquired its own stale key again.
  const H gave_up_as_fail = H{}.call(1, A).call(1, R, history::OpType::kFail).call(1, A);
  EXPECT_EQ(check(gave_up_as_fail), kInvalid);
  const H gave_up_as_info = H{}.call(1, A).call(1, R, history::OpType::kInfo).call(5, A);
  EXPECT_EQ(check(gave_up_as_info), kValid);
  EXPECT_EQ(check(gave_up_as_info, kOwner), kValid);
}

TEST(Linearizability, RuleBreaksAreFoundWithTheOpIndexAndTheRule) {
  auto rule = [](const H& h) {
    const auto b = checkers::find_rule_break(h.ops);
    return b ? std::to_string(b->index) + ": " + b->rule : std::string("none");
  };
  EXPECT_EQ(rule(H{}.call(0, A).call(0, R)), "none");
  EXPECT_EQ(rule(H{}.inv(0, A).inv(0, A)).rfind("1: process 0 invokes op 1", 0), 0u);
  EXPECT_NE(rule(H{}.inv(0, A).inv(0, A)).find("while its op 0 is still open"), std::string::npos);
  EXPECT_NE(rule(H{}.ok(0, A)).find("0: process 0 completes op 0 (:ok :acquire) that it never"),
            std::string::npos);
  EXPECT_NE(rule(H{}.call(0, A, history::OpType::kInfo).inv(0, R))
                .find("2: process 0 invokes op 2 after"),
            std::string::npos);
  EXPECT_NE(rule(H{}.inv(0, A).ok(0, R))
                .find("completes a :release but process 0 invoked a "
                      ":acquire"),
            std::string::npos);
  EXPECT_EQ(rule(H{}.nemesis().nemesis()), "none");
}

// Shortest failing prefix: up to the reported op it cannot be linearized,
// one op shorter it can.
void expect_shortest_prefix(const std::vector<history::Op>& ops,
                            const checkers::LinearizabilityVerdict& v, checkers::MutexModel m,
                            uint64_t seed) {
  ASSERT_GT(v.prefix_ops, 0);
  const auto end = std::find_if(ops.begin(), ops.end(), [&](const history::Op& op) {
    return op.index == v.prefix_end_index;
  });
  ASSERT_NE(end, ops.end()) << "seed " << seed;
  const std::vector<history::Op> with(ops.begin(), end + 1);
  const std::vector<history::Op> without(ops.begin(), end);
  EXPECT_FALSE(testing::BruteForce(with, m).linearizable()) << "seed " << seed;
  EXPECT_TRUE(testing::BruteForce(without, m).linearizable()) << "seed " << seed;
  EXPECT_EQ(std::count_if(with.begin(), with.end(), history::is_client_op), v.prefix_ops);
}

// The acceptance test: zero disagreements with brute force on >= 10,000
// random small histories per model, with :info, :fail, open calls and
// nemesis ops, and enough of both verdicts that the comparison means something.
TEST(Linearizability, AgreesWithBruteForceOnRandomSmallHistories) {
  constexpr int kHistories = 12'000;
  for (checkers::MutexModel m : {kMutex, kOwner}) {
    sim::Rng rng(m == kMutex ? 20240901 : 20240902);
    int valid = 0;
    int invalid = 0;
    int with_info = 0;
    for (int i = 0; i < kHistories; ++i) {
      const uint64_t seed = rng.next();
      sim::Rng one(seed);
      const std::vector<history::Op> ops = testing::random_lock_history(one);
      ASSERT_FALSE(checkers::find_rule_break(ops).has_value()) << "seed " << seed;
      const checkers::LinearizabilityVerdict v = checkers::check_linearizable(ops, m);
      const bool expected = testing::BruteForce(ops, m).linearizable();
      ASSERT_EQ(v.kind == kValid, expected)
          << to_string(m) << ", history seed " << seed << ": " << v.explanation;
      (expected ? valid : invalid)++;
      with_info += v.info_calls > 0;
      if (!expected) expect_shortest_prefix(ops, v, m, seed);
    }
    EXPECT_GT(valid, kHistories / 5) << to_string(m);
    EXPECT_GT(invalid, kHistories / 5) << to_string(m);
    EXPECT_GT(with_info, kHistories / 5) << to_string(m);
    std::printf("%s: %d valid, %d invalid, %d with :info calls, 0 disagreements\n", to_string(m),
                valid, invalid, with_info);
  }
}

// Larger histories, more processes: fewer (brute force is exponential), but
// they reach deeper interleavings.
TEST(Linearizability, AgreesWithBruteForceOnRandomMediumHistories) {
  testing::GenOptions g;
  g.processes_max = 6;
  g.events_max = 30;
  g.ok = 0.7;
  g.fail = 0.15;
  g.follow_f = 0.9;
  for (checkers::MutexModel m : {kMutex, kOwner}) {
    sim::Rng rng(m == kMutex ? 77 : 78);
    for (int i = 0; i < 1500; ++i) {
      const uint64_t seed = rng.next();
      sim::Rng one(seed);
      const std::vector<history::Op> ops = testing::random_lock_history(one, g);
      const checkers::LinearizabilityVerdict v = checkers::check_linearizable(ops, m);
      const bool expected = testing::BruteForce(ops, m).linearizable();
      ASSERT_EQ(v.kind == kValid, expected)
          << to_string(m) << ", history seed " << seed << ": " << v.explanation;
      if (!expected) expect_shortest_prefix(ops, v, m, seed);
    }
  }
}

}  // namespace
}  // namespace locksim::harness
