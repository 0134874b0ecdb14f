// getset-timestamp step by step (algorithms/getset_timestamp.h): expiry judged
// by the client's clock, the GETSET takeover and its quirks, lost replies, on
// the hand-cranked Env of algorithm_test_env.h.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "algorithms/getset_timestamp.h"
#include "tests/algorithm_test_env.h"

namespace locksim::algorithms {
namespace {

int64_t ms(TimePoint t) {
  return t.to_ms();
}

TEST(GetsetTimestamp, AcquireWritesClientClockExpiryThenReleases) {
  Cluster cluster(1);
  FakeEnv env(cluster, "c1");
  GetsetTimestamp lock(GetsetTimestamp::Params{});
  const int64_t expected = ms(env.now()) + 10'000 + 1;

  const AcquireResult a = lock.acquire(env, kKey);
  ASSERT_EQ(a.outcome, Outcome::kOk) << a.detail;
  EXPECT_EQ(a.lease.token, std::to_string(expected));
  EXPECT_EQ(cluster.get(0), Reply::bulk(a.lease.token));
  EXPECT_EQ(cluster.pttl(0), -1);  // the server never expires it
  EXPECT_EQ(a.lease.validity, Duration::millis(10'001));
  EXPECT_EQ(names(env.conn(0).sent), (std::vector<std::string>{"SETNX"}));

  EXPECT_EQ(lock.release(env, a.lease).outcome, Outcome::kOk);
  EXPECT_TRUE(cluster.get(0).is_nil());
}

TEST(GetsetTimestamp, LiveTimestampMeansHeld) {
  Cluster cluster(1);
  FakeEnv a_env(cluster, "c1", 1);
  FakeEnv b_env(cluster, "c2", 2);
  GetsetTimestamp::Params p;
  p.retry.max_attempts = 2;
  GetsetTimestamp lock(p);
  const AcquireResult a = lock.acquire(a_env, kKey);
  ASSERT_EQ(a.outcome, Outcome::kOk);
  const AcquireResult b = lock.acquire(b_env, kKey);
  EXPECT_EQ(b.outcome, Outcome::kFail);
  EXPECT_EQ(b.detail, "held by another client");
  EXPECT_EQ(names(b_env.conn(0).sent), (std::vector<std::string>{"SETNX", "GET", "SETNX", "GET"}));
  EXPECT_EQ(cluster.get(0), Reply::bulk(a.lease.token));
}

TEST(GetsetTimestamp, ExpiredByClientClockIsTakenOverWithGetset) {
  Cluster cluster(1);
  FakeEnv a_env(cluster, "c1", 1);
  FakeEnv b_env(cluster, "c2", 2);
  GetsetTimestamp::Params p;
  p.ttl = Duration::seconds(1);
  GetsetTimestamp lock(p);
  const AcquireResult a = lock.acquire(a_env, kKey);  // a then crashes, never releasing
  ASSERT_EQ(a.outcome, Outcome::kOk);
  cluster.true_now += Duration::seconds(2);

  const AcquireResult b = lock.acquire(b_env, kKey);
  ASSERT_EQ(b.outcome, Outcome::kOk) << b.detail;
  EXPECT_EQ(names(b_env.conn(0).sent), (std::vector<std::string>{"SETNX", "GET", "GETSET"}));
  EXPECT_EQ(b.lease.token, std::to_string(ms(b_env.now()) + 1'000 + 1));
  EXPECT_EQ(cluster.get(0), Reply::bulk(b.lease.token));

  // a's late release is refused by its own guard: its timestamp has passed.
  const ReleaseResult late = lock.release(a_env, a.lease);
  EXPECT_EQ(late.outcome, Outcome::kFail);
  EXPECT_EQ(cluster.get(0), Reply::bulk(b.lease.token));
}

TEST(GetsetTimestamp, ClientClockAheadByMoreThanTtlTakesOverALiveLock) {
  // The clock-skew violation in miniature: a holds a 10 s lock; b's clock runs
  // 11 s ahead, so b judges it expired the moment it looks.
  Cluster cluster(1);
  FakeEnv a_env(cluster, "c1", 1);
  FakeEnv b_env(cluster, "c2", 2);
  b_env.clock_offset = Duration::seconds(11);
  GetsetTimestamp lock(GetsetTimestamp::Params{});
  const AcquireResult a = lock.acquire(a_env, kKey);
  ASSERT_EQ(a.outcome, Outcome::kOk);

  cluster.true_now += Duration::millis(100);
  const AcquireResult b = lock.acquire(b_env, kKey);
  ASSERT_EQ(b.outcome, Outcome::kOk) << b.detail;
  // Both believe they hold it at the same true instant.
  EXPECT_LT(a_env.now().to_ms(), std::stoll(a.lease.token));
  EXPECT_GT(b.lease.validity, Duration::zero());

  // And a's release, guarded by a's own (correct) clock, deletes b's lock.
  EXPECT_EQ(lock.release(a_env, a.lease).outcome, Outcome::kOk);
  EXPECT_TRUE(cluster.get(0).is_nil());
}

TEST(GetsetTimestamp, LosingGetsetOverwritesTheWinnersTimestamp) {
  Cluster cluster(1);
  FakeEnv a_env(cluster, "c1", 1);
  FakeEnv b_env(cluster, "c2", 2);
  FakeEnv c_env(cluster, "c3", 3);
  GetsetTimestamp::Params p;
  p.ttl = Duration::seconds(1);
  GetsetTimestamp lock(p);
  ASSERT_EQ(lock.acquire(a_env, kKey).outcome, Outcome::kOk);
  cluster.true_now += Duration::seconds(2);  // a's lock expires; a is gone

  // c reads a's expired timestamp; just before c's GETSET, b does the same
  // and wins. c's GETSET then returns b's value, not a's: c loses.
  GetsetTimestamp::Params c_params = p;
  c_params.retry.max_attempts = 1;
  GetsetTimestamp c_lock(c_params);
  AcquireResult b;
  bool fired = false;
  c_env.before_command = [&](size_t, const Argv& argv) {
    if (argv[0] != "GETSET" || fired) return;
    fired = true;
    cluster.true_now += Duration::millis(5);  // b's stamps differ from c's
    b = lock.acquire(b_env, kKey);
  };
  const AcquireResult c = c_lock.acquire(c_env, kKey);
  ASSERT_EQ(b.outcome, Outcome::kOk) << b.detail;
  EXPECT_EQ(c.outcome, Outcome::kFail);
  EXPECT_EQ(c.detail, "another client took the expired lock over first");
  // The quirk: the key now holds c's timestamp, not the winner b's.
  const std::string c_stamp = c_env.conn(0).sent.back()[2];
  EXPECT_NE(c_stamp, b.lease.token);
  EXPECT_EQ(cluster.get(0), Reply::bulk(c_stamp));
}

TEST(GetsetTimestamp, VanishedKeyRetriesSetnxAtOnceWithinABound) {
  Cluster cluster(1);
  FakeEnv env(cluster, "c1");
  cluster.run(0, {"SET", kKey, "1"});
  // The key is deleted between our SETNX and our GET, once.
  bool deleted = false;
  env.before_command = [&](size_t, const Argv& argv) {
    if (argv[0] == "GET" && !deleted) {
      cluster.run(0, {"DEL", kKey});
      deleted = true;
    }
  };
  GetsetTimestamp lock(GetsetTimestamp::Params{});
  const AcquireResult a = lock.acquire(env, kKey);
  ASSERT_EQ(a.outcome, Outcome::kOk);
  EXPECT_EQ(a.attempts, 1);
  EXPECT_TRUE(env.sleeps.empty());
  EXPECT_EQ(names(env.conn(0).sent), (std::vector<std::string>{"SETNX", "GET", "SETNX"}));

  // Deleted before every GET and recreated before every SETNX: bounded.
  Cluster churn(1);
  FakeEnv env2(churn, "c2");
  env2.before_command = [&](size_t, const Argv& argv) {
    if (argv[0] == "GET") churn.run(0, {"DEL", kKey});
    if (argv[0] == "SETNX") churn.run(0, {"SET", kKey, "1"});
  };
  GetsetTimestamp::Params p;
  p.retry.max_attempts = 2;
  const AcquireResult b = GetsetTimestamp(p).acquire(env2, kKey);
  EXPECT_EQ(b.outcome, Outcome::kFail);
  EXPECT_EQ(env2.conn(0).sent.size(), 2u * 2u * GetsetTimestamp::kImmediateRetriesMax);
  EXPECT_NE(b.detail.find("vanished"), std::string::npos) << b.detail;
}

TEST(GetsetTimestamp, NonTimestampValueIsACleanFailure) {
  Cluster cluster(1);
  cluster.run(0, {"SET", kKey, "garbage"});
  FakeEnv env(cluster, "c1");
  GetsetTimestamp::Params p;
  p.retry.max_attempts = 2;
  const AcquireResult a = GetsetTimestamp(p).acquire(env, kKey);
  EXPECT_EQ(a.outcome, Outcome::kFail);
  EXPECT_NE(a.detail.find("'garbage'"), std::string::npos) << a.detail;
  EXPECT_EQ(cluster.get(0), Reply::bulk("garbage"));
}

TEST(GetsetTimestamp, LostRepliesAreUnknown) {
  Cluster cluster(1);
  FakeEnv env(cluster, "c1");
  env.faults(0).set_down(true);
  GetsetTimestamp::Params p;
  p.retry.max_attempts = 2;
  EXPECT_EQ(GetsetTimestamp(p).acquire(env, kKey).outcome, Outcome::kUnknown);

  // A lost GETSET reply: the takeover may have happened.
  Cluster c2(1);
  c2.run(0, {"SET", kKey, "1"});  // expired long ago by any clock
  FakeEnv env2(c2, "c2");
  env2.faults(0).lose_command("GETSET");
  p.retry.max_attempts = 1;
  EXPECT_EQ(GetsetTimestamp(p).acquire(env2, kKey).outcome, Outcome::kUnknown);
}

}  // namespace
}  // namespace locksim::algorithms
