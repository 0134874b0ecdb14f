// Redlock step by step (algorithms/redlock.h): quorum, validity and drift,
// unlocking after a failed round, release and extend outcomes, on the
// hand-cranked Env of algorithm_test_env.h.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "algorithms/redlock.h"
#include "algorithms/set_nx_lua.h"  // kReleaseScript
#include "env/parse.h"              // ConfigError
#include "tests/algorithm_test_env.h"

namespace locksim::algorithms {
namespace {

constexpr size_t kNodes = 5;

size_t nodes_holding(Cluster& cluster, const std::string& token) {
  size_t n = 0;
  for (size_t i = 0; i < cluster.servers.size(); ++i) n += cluster.get(i) == Reply::bulk(token);
  return n;
}

TEST(Redlock, DriftAndQuorumDefaults) {
  Redlock lock(Redlock::Params{});
  EXPECT_EQ(lock.drift(), Duration::millis(102));  // 10 s * 0.01 + 2 ms
  EXPECT_EQ(lock.quorum_for(5), 3u);
  EXPECT_EQ(lock.quorum_for(4), 3u);
  EXPECT_EQ(lock.quorum_for(1), 1u);
  EXPECT_EQ(lock.validate(5), "");
  EXPECT_NE(lock.validate(0), "");
  Redlock::Params p;
  p.quorum = 6;
  const std::string problem = Redlock(p).validate(5);
  EXPECT_NE(problem.find("quorum"), std::string::npos) << problem;
  p.quorum = 5;
  EXPECT_EQ(Redlock(p).validate(5), "");
}

TEST(Redlock, AcquireOnAllNodesThenRelease) {
  Cluster cluster(kNodes);
  FakeEnv env(cluster, "c1");
  Redlock lock(Redlock::Params{});
  const AcquireResult a = lock.acquire(env, kKey);
  ASSERT_EQ(a.outcome, Outcome::kOk) << a.detail;
  EXPECT_EQ(a.attempts, 1);
  EXPECT_EQ(a.lease.validity, Duration::seconds(10) - Duration::millis(102));
  for (size_t i = 0; i < kNodes; ++i) {
    EXPECT_EQ(env.conn(i).sent,
              (std::vector<Argv>{{"SET", kKey, a.lease.token, "NX", "PX", "10000"}}));
    EXPECT_EQ(cluster.pttl(i), 10'000);
  }
  const ReleaseResult r = lock.release(env, a.lease);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.detail;
  EXPECT_EQ(nodes_holding(cluster, a.lease.token), 0u);
  EXPECT_EQ(env.conn(4).sent.back(),
            (Argv{"EVAL", SetNxLua::kReleaseScript, "1", kKey, a.lease.token}));
}

TEST(Redlock, TwoOfFiveNodesDownStillAcquires) {
  Cluster cluster(kNodes);
  FakeEnv env(cluster, "c1");
  env.faults(1).set_down(true);
  env.faults(3).set_down(true);
  Redlock lock(Redlock::Params{});
  const AcquireResult a = lock.acquire(env, kKey);
  ASSERT_EQ(a.outcome, Outcome::kOk) << a.detail;
  EXPECT_EQ(nodes_holding(cluster, a.lease.token), 3u);
  EXPECT_EQ(lock.release(env, a.lease).outcome, Outcome::kOk);  // 3 deleted: a quorum
}

TEST(Redlock, ThreeOfFiveNodesDownFailsAndUnlocksTheNodesItGot) {
  Cluster cluster(kNodes);
  FakeEnv env(cluster, "c1");
  for (size_t i : {0, 2, 4}) env.faults(i).set_down(true);
  Redlock lock(Redlock::Params{});
  const AcquireResult a = lock.acquire(env, kKey);
  // The down nodes might have taken our SETs (only the replies lost) and
  // never answered the unlock: a quorum may hold our key. Undecidable.
  EXPECT_EQ(a.outcome, Outcome::kUnknown);
  EXPECT_EQ(a.attempts, 3);
  EXPECT_NE(a.detail.find("locked 2 of 5 nodes (quorum 3)"), std::string::npos) << a.detail;
  for (size_t i : {1, 3}) {
    EXPECT_TRUE(cluster.get(i).is_nil()) << "node " << i;
    EXPECT_EQ(names(env.conn(i).sent),
              (std::vector<std::string>{"SET", "EVAL", "SET", "EVAL", "SET", "EVAL"}));
  }
  ASSERT_EQ(env.sleeps.size(), 2u);
  for (Duration d : env.sleeps) {
    EXPECT_GE(d, Duration::millis(50));
    EXPECT_LE(d, Duration::millis(200));
  }
}

// Each round's SETs carry the token of that round: a fresh one per attempt
// by default, so an earlier round's unlock delivered late cannot delete a
// later round's key; one for the whole acquire with token=per-acquire, as
// the reference clients do.
TEST(Redlock, TokenIsFreshPerAttemptUnlessPerAcquire) {
  for (const bool per_attempt : {true, false}) {
    SCOPED_TRACE(per_attempt ? "per-attempt" : "per-acquire");
    Cluster cluster(kNodes);
    FakeEnv env(cluster, "c1");
    for (size_t i : {0, 2, 4}) env.faults(i).set_down(true);
    Redlock::Params p;
    p.token_per_attempt = per_attempt;
    Redlock(p).acquire(env, kKey);
    std::vector<std::string> tokens;  // the value of each SET to node 1, in order
    for (const Argv& argv : env.conn(1).sent) {
      if (argv.at(0) == "SET") tokens.push_back(argv.at(2));
    }
    ASSERT_EQ(tokens.size(), 3u);
    EXPECT_EQ(tokens[0] != tokens[1] && tokens[1] != tokens[2], per_attempt);
    EXPECT_EQ(tokens[0] == tokens[1] && tokens[1] == tokens[2], !per_attempt);
  }
  // The parameter as a user gives it, and a value it does not take.
  const AlgorithmSpec& spec = redlock_spec();
  EXPECT_NO_THROW(spec.make({{"token", "per-acquire"}}, "--"));
  try {
    spec.make({{"token", "per-lock"}}, "--");
    ADD_FAILURE() << "accepted token=per-lock";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("token"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("per-attempt or per-acquire"), std::string::npos);
  }
}

TEST(Redlock, LosingToAnotherHolderIsACleanFailureAndKeepsTheirKeys) {
  Cluster cluster(kNodes);
  for (size_t i : {0, 1, 2}) cluster.run(i, {"SET", kKey, "other", "PX", "10000"});
  FakeEnv env(cluster, "c1");
  Redlock::Params p;
  p.retry.max_attempts = 1;
  const AcquireResult a = Redlock(p).acquire(env, kKey);
  EXPECT_EQ(a.outcome, Outcome::kFail) << a.detail;
  EXPECT_EQ(nodes_holding(cluster, "other"), 3u);
  EXPECT_EQ(nodes_holding(cluster, a.lease.token), 0u);
  for (size_t i : {3, 4}) EXPECT_TRUE(cluster.get(i).is_nil());

  // One node down as well: our key may linger there, but one node is no
  // quorum, so the failure is still clean.
  FakeEnv env2(cluster, "c2");
  env2.faults(4).set_down(true);
  const AcquireResult b = Redlock(p).acquire(env2, kKey);
  EXPECT_EQ(b.outcome, Outcome::kFail) << b.detail;
}

TEST(Redlock, ValidityIsTtlMinusElapsedMinusDrift) {
  Cluster cluster(kNodes);
  FakeEnv env(cluster, "c1");
  for (size_t i = 0; i < kNodes; ++i) env.conn(i).latency = Duration::millis(7);
  Redlock lock(Redlock::Params{});
  const TimePoint t1 = env.now();
  const AcquireResult a = lock.acquire(env, kKey);
  ASSERT_EQ(a.outcome, Outcome::kOk);
  EXPECT_EQ(a.lease.acquired_local, t1);
  // 10 s - 5 * 7 ms - (10 s * 0.01 + 2 ms)
  EXPECT_EQ(a.lease.validity, Duration::millis(10'000 - 35 - 102));

  Redlock::Params p;
  p.drift_factor = 0.05;
  p.ttl = Duration::millis(2'000);
  Cluster c2(kNodes);
  FakeEnv env2(c2, "c1");
  for (size_t i = 0; i < kNodes; ++i) env2.conn(i).latency = Duration::micros(1'500);
  const AcquireResult b = Redlock(p).acquire(env2, kKey);
  ASSERT_EQ(b.outcome, Outcome::kOk);
  EXPECT_EQ(b.lease.validity,
            Duration::millis(2'000) - Duration::micros(7'500) - Duration::millis(100 + 2));
}

TEST(Redlock, NoValidityLeftFailsAndUnlocksEverything) {
  Cluster cluster(kNodes);
  FakeEnv env(cluster, "c1");
  for (size_t i = 0; i < kNodes; ++i) env.conn(i).latency = Duration::millis(1'980);
  Redlock::Params p;
  p.retry.max_attempts = 1;
  const AcquireResult a = Redlock(p).acquire(env, kKey);
  EXPECT_EQ(a.outcome, Outcome::kFail);
  EXPECT_NE(a.detail.find("validity"), std::string::npos) << a.detail;
  for (size_t i = 0; i < kNodes; ++i) EXPECT_TRUE(cluster.get(i).is_nil()) << "node " << i;
}

TEST(Redlock, BackwardClockStepInflatesValidityPastTtl) {
  Cluster cluster(kNodes);
  FakeEnv env(cluster, "c1");
  for (size_t i = 0; i < kNodes; ++i) env.conn(i).latency = Duration::millis(10);
  env.before_command = [&](size_t server, const Argv&) {
    if (server == 3) env.clock_offset = -Duration::seconds(5);  // NTP steps the clock back
  };
  const AcquireResult a = Redlock(Redlock::Params{}).acquire(env, kKey);
  ASSERT_EQ(a.outcome, Outcome::kOk);
  // elapsed by the client's clock: 50 ms - 5 s.
  EXPECT_EQ(a.lease.validity, Duration::seconds(10) -
                                  (Duration::millis(50) - Duration::seconds(5)) -
                                  Duration::millis(102));
  EXPECT_GT(a.lease.validity, Duration::seconds(10));
  // While the keys themselves live only the TTL from each SET.
  EXPECT_LE(cluster.pttl(0), 10'000 - 40);
}

TEST(Redlock, ReleaseCountsDeletesAgainstTheQuorum) {
  Cluster cluster(kNodes);
  FakeEnv env(cluster, "c1");
  Redlock lock(Redlock::Params{});
  const AcquireResult a = lock.acquire(env, kKey);
  ASSERT_EQ(a.outcome, Outcome::kOk);

  // Three keys lost (expired, restarted without fsync): 2 deletes < quorum 3.
  for (size_t i : {0, 1, 2}) cluster.run(i, {"DEL", kKey});
  ReleaseResult r = lock.release(env, a.lease);
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_NE(r.detail.find("deleted on 2 of 5 nodes (quorum 3)"), std::string::npos) << r.detail;

  // 2 deleted, 1 silent: it may have deleted too. Undecidable.
  const AcquireResult b = lock.acquire(env, kKey);
  ASSERT_EQ(b.outcome, Outcome::kOk);
  for (size_t i : {0, 1}) cluster.run(i, {"DEL", kKey});
  env.faults(2).set_down(true);
  r = lock.release(env, b.lease);
  EXPECT_EQ(r.outcome, Outcome::kUnknown) << r.detail;

  // 1 deleted, 1 silent: even if it did, 2 < 3. A definite failure.
  env.faults(2).set_down(false);
  const AcquireResult c = lock.acquire(env, kKey);
  ASSERT_EQ(c.outcome, Outcome::kOk);
  for (size_t i : {0, 1, 3}) cluster.run(i, {"DEL", kKey});
  env.faults(2).set_down(true);
  r = lock.release(env, c.lease);
  EXPECT_EQ(r.outcome, Outcome::kFail) << r.detail;
}

TEST(Redlock, ExtendResetsTtlAndValidity) {
  Cluster cluster(kNodes);
  FakeEnv env(cluster, "c1");
  Redlock lock(Redlock::Params{});
  AcquireResult a = lock.acquire(env, kKey);
  ASSERT_EQ(a.outcome, Outcome::kOk);
  Lease lease = a.lease;
  env.sleep(Duration::seconds(6));
  for (size_t i = 0; i < kNodes; ++i) env.conn(i).latency = Duration::millis(3);
  const TimePoint t1 = env.now();

  const ExtendResult e = lock.extend(env, lease);
  ASSERT_EQ(e.outcome, Outcome::kOk) << e.detail;
  EXPECT_EQ(lease.acquired_local, t1);
  EXPECT_EQ(lease.validity, Duration::seconds(10) - Duration::millis(15 + 102));
  EXPECT_EQ(env.conn(0).sent.back(),
            (Argv{"EVAL", Redlock::kExtendScript, "1", kKey, a.lease.token, "10000"}));
  EXPECT_EQ(cluster.pttl(4), 10'000);

  // Keys gone on 3 nodes: not extended, lease unchanged.
  for (size_t i : {0, 1, 2}) cluster.run(i, {"DEL", kKey});
  const Lease before = lease;
  ExtendResult f = lock.extend(env, lease);
  EXPECT_EQ(f.outcome, Outcome::kFail) << f.detail;
  EXPECT_EQ(lease.validity, before.validity);
  EXPECT_EQ(lease.acquired_local, before.acquired_local);

  // ...and with one of them silent, 2 + 1 could be a quorum: unknown.
  env.faults(0).set_down(true);
  f = lock.extend(env, lease);
  EXPECT_EQ(f.outcome, Outcome::kUnknown) << f.detail;
}

TEST(Redlock, ExtendRefusesAnExpiredLeaseAndOneThatRanOutMeanwhile) {
  Cluster cluster(kNodes);
  FakeEnv env(cluster, "c1");
  Redlock::Params p;
  p.ttl = Duration::seconds(1);
  Redlock lock(p);
  AcquireResult a = lock.acquire(env, kKey);
  ASSERT_EQ(a.outcome, Outcome::kOk);
  Lease lease = a.lease;
  env.sleep(Duration::seconds(2));
  const size_t sent = env.conn(0).sent.size();
  EXPECT_EQ(lock.extend(env, lease).outcome, Outcome::kFail);
  EXPECT_EQ(env.conn(0).sent.size(), sent);  // nothing sent

  // Started in time, finished after the old validity ended.
  Cluster c2(kNodes);
  FakeEnv env2(c2, "c2");
  AcquireResult b = lock.acquire(env2, kKey);
  ASSERT_EQ(b.outcome, Outcome::kOk);
  Lease lease2 = b.lease;
  env2.sleep(Duration::millis(800));
  for (size_t i = 0; i < kNodes; ++i) env2.conn(i).latency = Duration::millis(40);
  const ExtendResult e = lock.extend(env2, lease2);
  EXPECT_EQ(e.outcome, Outcome::kFail);
  EXPECT_NE(e.detail.find("after the old lease ran out"), std::string::npos) << e.detail;
}

TEST(Redlock, ExplicitQuorumIsUsed) {
  Cluster cluster(kNodes);
  FakeEnv env(cluster, "c1");
  env.faults(2).set_down(true);
  Redlock::Params p;
  p.quorum = 5;
  p.retry.max_attempts = 1;
  EXPECT_NE(Redlock(p).acquire(env, kKey).outcome, Outcome::kOk);
  p.quorum = 2;  // below a majority: accepted, and unsafe, as scenarios can show
  env.faults(2).set_down(false);
  for (size_t i : {0, 1, 3}) env.faults(i).set_down(true);
  const AcquireResult a = Redlock(p).acquire(env, kKey);
  ASSERT_EQ(a.outcome, Outcome::kOk) << a.detail;
  EXPECT_EQ(nodes_holding(cluster, a.lease.token), 2u);
}

}  // namespace
}  // namespace locksim::algorithms
