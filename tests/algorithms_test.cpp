// The lock algorithms step by step, against simulated Redis servers driven by
// a hand-cranked Env: every clock reading, sleep and lost reply is the test's
// choice, so each step of each algorithm can be checked on its own.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "algorithms/getset_timestamp.h"
#include "algorithms/naive_setnx.h"
#include "algorithms/redlock.h"
#include "algorithms/registry.h"
#include "algorithms/set_nx_lua.h"
#include "env/env.h"
#include "env/parse.h"
#include "sim/redis/server.h"
#include "sim/rng.h"

namespace locksim::algorithms {
namespace {

using Argv = std::vector<std::string>;

constexpr const char* kKey = "lock:resource";

// True time and the Redis servers, shared by every client of a test. Servers
// read true time: their clocks are perfect unless a test says otherwise.
struct Cluster {
  explicit Cluster(size_t n_servers) {
    for (size_t i = 0; i < n_servers; ++i) {
      servers.push_back(std::make_unique<sim::redis::Server>(1000 + i));
    }
  }
  // A plausible unix time, so timestamps look like the ones real clients write.
  TimePoint true_now = TimePoint::from_ns(1'700'000'000'000'000'000);
  std::vector<std::unique_ptr<sim::redis::Server>> servers;

  // Runs a command on server i directly, as another party would.
  Reply run(size_t i, const Argv& argv) { return servers[i]->execute(argv, true_now); }
  Reply get(size_t i) { return run(i, {"GET", kKey}); }
  int64_t pttl(size_t i) { return run(i, {"PTTL", kKey}).integer; }
};

class FakeEnv;

// A connection to one simulated server that the test can break: `down` drops
// every request (the server never sees it); `lose_replies` lets the server
// execute it and drops only the reply; `fail_commands` drops requests by name.
class FakeConnection : public RedisConnection {
 public:
  FakeConnection(FakeEnv& env, Cluster& cluster, size_t index)
      : env_(env), cluster_(cluster), index_(index) {}

  Reply command(const Argv& argv) override;
  std::string server_name() const override { return "redis-" + std::to_string(index_ + 1); }

  bool down = false;
  int lose_replies = 0;  // the next n replies are lost after the server executes
  std::set<std::string> fail_commands;
  Duration latency = Duration::zero();  // true time each command takes
  std::vector<Argv> sent;               // every command, answered or not

 private:
  FakeEnv& env_;
  Cluster& cluster_;
  size_t index_;
};

class FakeEnv : public Env {
 public:
  FakeEnv(Cluster& cluster, std::string name, uint64_t seed = 1)
      : cluster_(cluster), name_(std::move(name)), rng_state_(seed) {
    for (size_t i = 0; i < cluster.servers.size(); ++i) {
      connections_.push_back(std::make_unique<FakeConnection>(*this, cluster, i));
    }
  }

  TimePoint now() override { return cluster_.true_now + clock_offset; }
  void sleep(Duration d) override {
    EXPECT_GE(d, Duration::zero());
    sleeps.push_back(d);
    cluster_.true_now += d;
  }
  uint64_t random() override { return sim::splitmix64(rng_state_); }
  RedisConnection& redis(size_t i) override { return *connections_.at(i); }
  size_t redis_count() const override { return connections_.size(); }
  std::string client_name() const override { return name_; }

  FakeConnection& conn(size_t i) { return *connections_.at(i); }
  Duration slept() const {
    Duration total;
    for (Duration d : sleeps) total += d;
    return total;
  }

  Duration clock_offset = Duration::zero();  // client clock minus true time
  std::vector<Duration> sleeps;
  // Runs before each command reaches the server (or fails): a hook to step
  // the clock or let another client act at exactly that point.
  std::function<void(size_t server, const Argv& argv)> before_command;

 private:
  Cluster& cluster_;
  std::string name_;
  uint64_t rng_state_;
  std::vector<std::unique_ptr<FakeConnection>> connections_;
};

Reply FakeConnection::command(const Argv& argv) {
  sent.push_back(argv);
  if (env_.before_command) env_.before_command(index_, argv);
  cluster_.true_now += latency;
  if (down || fail_commands.count(argv[0]) > 0) return Reply::io_error("timeout");
  Reply r = cluster_.servers[index_]->execute(argv, cluster_.true_now);
  if (lose_replies > 0) {
    --lose_replies;
    return Reply::io_error("timeout");
  }
  return r;
}

std::vector<std::string> names(const std::vector<Argv>& sent) {
  std::vector<std::string> out;
  for (const Argv& a : sent) out.push_back(a[0]);
  return out;
}

// ---------------------------------------------------------------- naive-setnx

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
  env.conn(0).fail_commands = {"EXPIRE"};
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
  p.max_attempts = 4;
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
  env.conn(0).down = true;
  NaiveSetnx::Params p;
  p.max_attempts = 3;
  NaiveSetnx lock(p);
  const AcquireResult a = lock.acquire(env, kKey);
  EXPECT_EQ(a.outcome, Outcome::kUnknown);
  EXPECT_EQ(a.detail, "timeout");
}

TEST(NaiveSetnx, OwnLandedSetnxIsRecognisedAndGetsItsExpire) {
  Cluster cluster(1);
  FakeEnv env(cluster, "c1");
  env.conn(0).lose_replies = 1;  // the first SETNX lands; its reply is lost
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
  env.conn(0).down = true;
  EXPECT_EQ(lock.release(env, a.lease).outcome, Outcome::kUnknown);
}

// ----------------------------------------------------------- getset-timestamp

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
  p.max_attempts = 2;
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
  c_params.max_attempts = 1;
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
  p.max_attempts = 2;
  const AcquireResult b = GetsetTimestamp(p).acquire(env2, kKey);
  EXPECT_EQ(b.outcome, Outcome::kFail);
  EXPECT_EQ(env2.conn(0).sent.size(), 2u * 2u * GetsetTimestamp::kMaxImmediateRetries);
  EXPECT_NE(b.detail.find("vanished"), std::string::npos) << b.detail;
}

TEST(GetsetTimestamp, NonTimestampValueIsACleanFailure) {
  Cluster cluster(1);
  cluster.run(0, {"SET", kKey, "garbage"});
  FakeEnv env(cluster, "c1");
  GetsetTimestamp::Params p;
  p.max_attempts = 2;
  const AcquireResult a = GetsetTimestamp(p).acquire(env, kKey);
  EXPECT_EQ(a.outcome, Outcome::kFail);
  EXPECT_NE(a.detail.find("'garbage'"), std::string::npos) << a.detail;
  EXPECT_EQ(cluster.get(0), Reply::bulk("garbage"));
}

TEST(GetsetTimestamp, LostRepliesAreUnknown) {
  Cluster cluster(1);
  FakeEnv env(cluster, "c1");
  env.conn(0).down = true;
  GetsetTimestamp::Params p;
  p.max_attempts = 2;
  EXPECT_EQ(GetsetTimestamp(p).acquire(env, kKey).outcome, Outcome::kUnknown);

  // A lost GETSET reply: the takeover may have happened.
  Cluster c2(1);
  c2.run(0, {"SET", kKey, "1"});  // expired long ago by any clock
  FakeEnv env2(c2, "c2");
  env2.conn(0).fail_commands = {"GETSET"};
  p.max_attempts = 1;
  EXPECT_EQ(GetsetTimestamp(p).acquire(env2, kKey).outcome, Outcome::kUnknown);
}

// -------------------------------------------------------------------- redlock

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
  env.conn(1).down = true;
  env.conn(3).down = true;
  Redlock lock(Redlock::Params{});
  const AcquireResult a = lock.acquire(env, kKey);
  ASSERT_EQ(a.outcome, Outcome::kOk) << a.detail;
  EXPECT_EQ(nodes_holding(cluster, a.lease.token), 3u);
  EXPECT_EQ(lock.release(env, a.lease).outcome, Outcome::kOk);  // 3 deleted: a quorum
}

TEST(Redlock, ThreeOfFiveNodesDownFailsAndUnlocksTheNodesItGot) {
  Cluster cluster(kNodes);
  FakeEnv env(cluster, "c1");
  for (size_t i : {0, 2, 4}) env.conn(i).down = true;
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

TEST(Redlock, LosingToAnotherHolderIsACleanFailureAndKeepsTheirKeys) {
  Cluster cluster(kNodes);
  for (size_t i : {0, 1, 2}) cluster.run(i, {"SET", kKey, "other", "PX", "10000"});
  FakeEnv env(cluster, "c1");
  Redlock::Params p;
  p.max_attempts = 1;
  const AcquireResult a = Redlock(p).acquire(env, kKey);
  EXPECT_EQ(a.outcome, Outcome::kFail) << a.detail;
  EXPECT_EQ(nodes_holding(cluster, "other"), 3u);
  EXPECT_EQ(nodes_holding(cluster, a.lease.token), 0u);
  for (size_t i : {3, 4}) EXPECT_TRUE(cluster.get(i).is_nil());

  // One node down as well: our key may linger there, but one node is no
  // quorum, so the failure is still clean.
  FakeEnv env2(cluster, "c2");
  env2.conn(4).down = true;
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
  p.max_attempts = 1;
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
  env.conn(2).down = true;
  r = lock.release(env, b.lease);
  EXPECT_EQ(r.outcome, Outcome::kUnknown) << r.detail;

  // 1 deleted, 1 silent: even if it did, 2 < 3. A definite failure.
  env.conn(2).down = false;
  const AcquireResult c = lock.acquire(env, kKey);
  ASSERT_EQ(c.outcome, Outcome::kOk);
  for (size_t i : {0, 1, 3}) cluster.run(i, {"DEL", kKey});
  env.conn(2).down = true;
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
  env.conn(0).down = true;
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
  env.conn(2).down = true;
  Redlock::Params p;
  p.quorum = 5;
  p.max_attempts = 1;
  EXPECT_NE(Redlock(p).acquire(env, kKey).outcome, Outcome::kOk);
  p.quorum = 2;  // below a majority: accepted, and unsafe, as scenarios can show
  env.conn(2).down = false;
  for (size_t i : {0, 1, 3}) env.conn(i).down = true;
  const AcquireResult a = Redlock(p).acquire(env, kKey);
  ASSERT_EQ(a.outcome, Outcome::kOk) << a.detail;
  EXPECT_EQ(nodes_holding(cluster, a.lease.token), 2u);
}

// ------------------------------------------------------------------- registry

std::unique_ptr<LockAlgorithm> build(const std::string& name, ParamValues values = {}) {
  const AlgorithmSpec* spec = find_algorithm(name);
  EXPECT_NE(spec, nullptr) << name;
  return spec->make(values, "--");
}

std::string config_error(const std::string& name, ParamValues values) {
  try {
    build(name, values);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Registry, EveryAlgorithmBuildsWithItsDefaults) {
  for (const char* name : {"set-nx-lua", "naive-setnx", "getset-timestamp", "redlock"}) {
    const std::unique_ptr<LockAlgorithm> a = build(name);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->name(), name);
  }
  EXPECT_EQ(algorithm_names(), "set-nx-lua, naive-setnx, getset-timestamp, redlock");

  const auto naive = build("naive-setnx");
  const NaiveSetnx::Params& np = dynamic_cast<NaiveSetnx&>(*naive).params();
  EXPECT_EQ(np.ttl, Duration::seconds(10));
  EXPECT_EQ(np.max_attempts, 20);
  EXPECT_EQ(np.retry_min, Duration::millis(50));
  EXPECT_EQ(np.retry_max, Duration::millis(150));
  EXPECT_EQ(np.expire_delay, Duration::zero());

  const auto getset = build("getset-timestamp");
  const GetsetTimestamp::Params& gp = dynamic_cast<GetsetTimestamp&>(*getset).params();
  EXPECT_EQ(gp.ttl, Duration::seconds(10));
  EXPECT_EQ(gp.max_attempts, 20);

  const auto redlock = build("redlock");
  const Redlock::Params& rp = dynamic_cast<Redlock&>(*redlock).params();
  EXPECT_EQ(rp.ttl, Duration::seconds(10));
  EXPECT_EQ(rp.quorum, 0u);
  EXPECT_EQ(rp.drift_factor, 0.01);
  EXPECT_EQ(rp.max_attempts, 3);
  EXPECT_EQ(rp.retry_min, Duration::millis(50));
  EXPECT_EQ(rp.retry_max, Duration::millis(200));
}

TEST(Registry, ParamsAreRead) {
  const auto naive = build("naive-setnx", {{"expire-delay", "3s"}, {"ttl", "1500ms"}});
  EXPECT_EQ(dynamic_cast<NaiveSetnx&>(*naive).params().expire_delay, Duration::seconds(3));
  const auto redlock =
      build("redlock", {{"quorum", "4"}, {"drift-factor", "0"}, {"max-attempts", "7"}});
  const Redlock::Params& rp = dynamic_cast<Redlock&>(*redlock).params();
  EXPECT_EQ(rp.quorum, 4u);
  EXPECT_EQ(rp.drift_factor, 0.0);
  EXPECT_EQ(rp.max_attempts, 7);
}

TEST(Registry, BadValuesNameTheField) {
  EXPECT_EQ(config_error("redlock", {{"drift-factor", "1.5"}}),
            "--drift-factor: expected a number in [0, 1), got '1.5'");
  for (const char* bad : {"1", "-0.1", "nan", "inf", "abc", "", "0.5x"}) {
    EXPECT_EQ(config_error("redlock", {{"drift-factor", bad}}).rfind("--drift-factor: ", 0), 0u)
        << bad;
  }
  for (const char* bad : {"0", "-1", "x", "3.5", "1001"}) {
    EXPECT_EQ(config_error("redlock", {{"quorum", bad}}).rfind("--quorum: ", 0), 0u) << bad;
  }
  EXPECT_EQ(config_error("redlock", {{"ttl", "0s"}}).rfind("--ttl: ", 0), 0u);
  EXPECT_EQ(config_error("redlock", {{"retry", "2s..1s"}}).rfind("--retry: ", 0), 0u);
  EXPECT_EQ(config_error("naive-setnx", {{"expire-delay", "soon"}}).rfind("--expire-delay: ", 0),
            0u);
  EXPECT_EQ(config_error("naive-setnx", {{"ttl", "10"}}).rfind("--ttl: ", 0), 0u);
  EXPECT_EQ(config_error("getset-timestamp", {{"max-attempts", "0"}}).rfind("--max-attempts: ", 0),
            0u);
  EXPECT_EQ(
      config_error("getset-timestamp", {{"quorum", "3"}}).rfind("--quorum: not a parameter", 0),
      0u);
}

}  // namespace
}  // namespace locksim::algorithms
