// naive-setnx step by step (algorithms/naive_setnx.h): the SETNX/EXPIRE window,
// the late DEL, backoff and lost replies, on the hand-cranked Env of
// algorithm_test_env.h.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "algorithms/naive_setnx.h"
#include "tests/algorithm_test_env.h"

namespace locksim::algorithms {
namespace {

TEST(NaiveSetnx, ExpireSecondsRoundUpAndNeverZero) {
  EXPECT_EQ(NaiveSetnx::expire_seconds(Duration::seconds(10)), 10);
  EXPECT_EQ(NaiveSetnx::expire_seconds(Duration::millis(1500)), 2);
  EXPECT_EQ(NaiveSetnx::expire_seconds(Duration::millis(10001)), 11);
  EXPECT_EQ(NaiveSetnx::expire_seconds(Duration::millis(1)), 1);
}

TEST(NaiveSetnx, AcquireThenReleaseHappyPath) {
  Cluster cluster(1);
  FakeEnv env(cluster, "c1");
  NaiveSetnx lock(NaiveSetnx::Params{});

  const AcquireResult a = lock.acquire(env, kKey);
  ASSERT_EQ(a.outcome, Outcome::kOk) << a.detail;
  EXPECT_EQ(a.attempts, 1);
  EXPECT_TRUE(a.detail.empty());
  EXPECT_EQ(a.lease.token.rfind("c1:", 0), 0u);
  EXPECT_EQ(a.lease.validity, Duration::seconds(10));
  EXPECT_EQ(cluster.get(0), Reply::bulk(a.lease.token));
  EXPECT_EQ(cluster.pttl(0), 10'000);
  ASSERT_EQ(env.conn(0).sent.size(), 2u);
  EXPECT_EQ(env.conn(0).sent[0], (Argv{"SETNX", kKey, a.lease.token}));
  EXPECT_EQ(env.conn(0).sent[1], (Argv{"EXPIRE", kKey, "10"}));

  const ReleaseResult r = lock.release(env, a.lease);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.detail;
  EXPECT_EQ(env.conn(0).sent.back(), (Argv{"DEL", kKey}));
  EXPECT_TRUE(cluster.get(0).is_nil());
  // A second release finds nothing to delete.
  const ReleaseResult again = lock.release(env, a.lease);
  EXPECT_EQ(again.outcome, Outcome::kFail);
  EXPECT_EQ(again.detail, "key already gone");
}

TEST(NaiveSetnx, ExpireLostStillAcquiredAndKeyNeverExpires) {
  Cluster cluster(1);
  FakeEnv env(cluster, "c1");
  env.faults(0).lose_command("EXPIRE");
  NaiveSetnx lock(NaiveSetnx::Params{});

  const AcquireResult a = lock.acquire(env, kKey);
  ASSERT_EQ(a.outcome, Outcome::kOk);
  EXPECT_NE(a.detail.find("EXPIRE failed"), std::string::npos) << a.detail;
  EXPECT_EQ(cluster.pttl(0), -1);  // exists, no expiry: stuck if the holder dies
  cluster.true_now += Duration::seconds(3600);
  EXPECT_EQ(cluster.get(0), Reply::bulk(a.lease.token));
}

TEST(NaiveSetnx, ExpireDelayOpensTheWindowBetweenSetnxAndExpire) {
  Cluster cluster(1);
  FakeEnv env(cluster, "c1");
  NaiveSetnx::Params p;
  p.expire_delay = Duration::seconds(2);
  NaiveSetnx lock(p);
  int64_t pttl_before_expire = 0;
  TimePoint expire_sent;
  env.before_command = [&](size_t, const Argv& argv) {
    if (argv[0] == "EXPIRE") {
      pttl_before_expire = cluster.pttl(0);
      expire_sent = cluster.true_now;
    }
  };
  const TimePoint start = cluster.true_now;
  const AcquireResult a = lock.acquire(env, kKey);
  ASSERT_EQ(a.outcome, Outcome::kOk);
  EXPECT_EQ(expire_sent - start, Duration::seconds(2));
  EXPECT_EQ(pttl_before_expire, -1);
  EXPECT_EQ(a.lease.validity, Duration::seconds(8));  // the TTL counts from before SETNX
}

TEST(NaiveSetnx, LateDelDeletesTheNextHoldersKey) {
  Cluster cluster(1);
  FakeEnv a_env(cluster, "c1", 1);
  FakeEnv b_env(cluster, "c2", 2);
  NaiveSetnx::Params p;
  p.ttl = Duration::seconds(1);
  NaiveSetnx lock(p);

  const AcquireResult a = lock.acquire(a_env, kKey);
  ASSERT_EQ(a.outcome, Outcome::kOk);
  cluster.true_now += Duration::seconds(3);  // a pauses past its TTL
  const AcquireResult b = lock.acquire(b_env, kKey);
  ASSERT_EQ(b.outcome, Outcome::kOk);
  EXPECT_EQ(cluster.get(0), Reply::bulk(b.lease.token));

  // a wakes and releases: its DEL removes b's key, and reports success.
  EXPECT_EQ(lock.release(a_env, a.lease).outcome, Outcome::kOk);
  EXPECT_TRUE(cluster.get(0).is_nil());
  // So a third client gets in while b still believes it holds the lock.
  FakeEnv c_env(cluster, "c3", 3);
  EXPECT_EQ(lock.acquire(c_env, kKey).outcome, Outcome::kOk);
}

TEST(NaiveSetnx, HeldLockRetriesWithSeededBackoffThenFails) {
  Cluster cluster(1);
  cluster.run(0, {"SET", kKey, "someone"});
  FakeEnv env(cluster, "c1");
  NaiveSetnx::Params p;
  p.retry.max_attempts = 4;
  NaiveSetnx lock(p);

  const AcquireResult a = lock.acquire(env, kKey);
  EXPECT_EQ(a.outcome, Outcome::kFail);
  EXPECT_EQ(a.attempts, 4);
  EXPECT_EQ(a.detail, "held by another client");
  ASSERT_EQ(env.sleeps.size(), 3u);  // none after the last attempt
  for (Duration d : env.sleeps) {
    EXPECT_GE(d, Duration::millis(50));
    EXPECT_LE(d, Duration::millis(150));
  }
  // Same seed, same backoffs.
  FakeEnv again(cluster, "c1");
  lock.acquire(again, kKey);
  EXPECT_EQ(again.sleeps, env.sleeps);
}

TEST(NaiveSetnx, LostSetnxRepliesAreUnknown) {
  Cluster cluster(1);
  FakeEnv env(cluster, "c1");
  env.faults(0).set_down(true);
  NaiveSetnx::Params p;
  p.retry.max_attempts = 3;
  NaiveSetnx lock(p);
  const AcquireResult a = lock.acquire(env, kKey);
  EXPECT_EQ(a.outcome, Outcome::kUnknown);
  EXPECT_EQ(a.detail, "timeout");
}

TEST(NaiveSetnx, OwnLandedSetnxIsRecognisedAndGetsItsExpire) {
  Cluster cluster(1);
  FakeEnv env(cluster, "c1");
  env.faults(0).lose_next_replies(1);  // the first SETNX lands; its reply is lost
  NaiveSetnx lock(NaiveSetnx::Params{});
  const AcquireResult a = lock.acquire(env, kKey);
  ASSERT_EQ(a.outcome, Outcome::kOk) << a.detail;
  EXPECT_EQ(a.attempts, 2);
  EXPECT_EQ(names(env.conn(0).sent), (std::vector<std::string>{"SETNX", "SETNX", "GET", "EXPIRE"}));
  EXPECT_EQ(cluster.pttl(0), 10'000);
}

TEST(NaiveSetnx, ReleaseOutcomes) {
  Cluster cluster(1);
  FakeEnv env(cluster, "c1");
  NaiveSetnx lock(NaiveSetnx::Params{});
  const AcquireResult a = lock.acquire(env, kKey);
  ASSERT_EQ(a.outcome, Outcome::kOk);
  env.faults(0).set_down(true);
  EXPECT_EQ(lock.release(env, a.lease).outcome, Outcome::kUnknown);
}

}  // namespace
}  // namespace locksim::algorithms
