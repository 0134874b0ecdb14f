// The simulated ZooKeeper ensemble and the three lock variants in a sim::World (no runner): the
// DataTree, sessions and their clamp, the recipes' safety, pause boundary and lost-reply stall.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/zk_lock.h"
#include "env/parse.h"
#include "harness/history.h"
#include "harness/workload.h"
#include "sim/client_env.h"
#include "sim/network.h"
#include "sim/world.h"
#include "sim/zookeeper/data_tree.h"
#include "sim/zookeeper/deployment.h"

namespace locksim::sim::zookeeper {
namespace {

// ---------------------------------------------------------------- DataTree

Request create_req(const std::string& path, bool ephemeral = false, bool sequential = false) {
  Request r;
  r.kind = OpKind::kCreate;
  r.path = path;
  r.flags.ephemeral = ephemeral;
  r.flags.sequential = sequential;
  return r;
}

Request delete_req(const std::string& path, int32_t version = -1) {
  Request r;
  r.kind = OpKind::kDelete;
  r.path = path;
  r.version = version;
  return r;
}

// Prepares and applies one request, as the leader and a server would.
TxnResult run(DataTree& t, const Request& r, SessionId s = 0) {
  return t.apply(t.prepare(r, s, t.last_zxid() + 1, 0));
}

TEST(ZkDataTree, SequentialNumbersCountCreatesNotDeletes) {
  DataTree t;
  ASSERT_EQ(run(t, create_req("/p")).error, ZkError::kOk);
  EXPECT_EQ(run(t, create_req("/p/a-", false, true)).path, "/p/a-0000000000");
  EXPECT_EQ(run(t, create_req("/p/a-", false, true)).path, "/p/a-0000000001");
  ASSERT_EQ(run(t, delete_req("/p/a-0000000000")).error, ZkError::kOk);
  // A delete does not count: the next number is 2, not 3.
  EXPECT_EQ(run(t, create_req("/p/a-", false, true)).path, "/p/a-0000000002");
  // A plain child counts too, and one already holding the next name makes
  // the sequential create fail, with the counter staying put.
  ASSERT_EQ(run(t, create_req("/p/a-0000000004")).error, ZkError::kOk);
  EXPECT_EQ(run(t, create_req("/p/a-", false, true)).error, ZkError::kNodeExists);
  EXPECT_EQ(run(t, create_req("/p/a-", false, true)).error, ZkError::kNodeExists);
  // The cversion a client reads counts creates and deletes: 4 + 1.
  EXPECT_EQ(t.exists("/p").stat.cversion, 5);
  // Numbering is per parent.
  ASSERT_EQ(run(t, create_req("/q")).error, ZkError::kOk);
  EXPECT_EQ(run(t, create_req("/q/x", false, true)).path, "/q/x0000000000");
}

TEST(ZkDataTree, ErrorsAsZooKeeperGivesThem) {
  DataTree t;
  EXPECT_EQ(run(t, create_req("/a/b")).error, ZkError::kNoNode);
  ASSERT_EQ(run(t, create_req("/a")).error, ZkError::kOk);
  EXPECT_EQ(run(t, create_req("/a")).error, ZkError::kNodeExists);
  ASSERT_EQ(run(t, create_req("/a/b")).error, ZkError::kOk);
  EXPECT_EQ(run(t, delete_req("/a")).error, ZkError::kNotEmpty);
  EXPECT_EQ(run(t, delete_req("/a/b", 3)).error, ZkError::kBadVersion);
  EXPECT_EQ(run(t, delete_req("/nope")).error, ZkError::kNoNode);
  EXPECT_EQ(run(t, create_req("bad")).error, ZkError::kBadArguments);
  Request s;
  s.kind = OpKind::kCreateSession;
  s.session_timeout = Duration::seconds(4);
  run(t, s, 7);
  ASSERT_EQ(run(t, create_req("/e", true), 7).error, ZkError::kOk);
  EXPECT_EQ(run(t, create_req("/e/child")).error, ZkError::kNoChildrenForEphemerals);
}

TEST(ZkDataTree, ClosingASessionDeletesItsEphemeralsAndFiresTheirEvents) {
  DataTree t;
  Request s;
  s.kind = OpKind::kCreateSession;
  s.session_timeout = Duration::seconds(4);
  run(t, s, 7);
  ASSERT_EQ(run(t, create_req("/l")).error, ZkError::kOk);
  const TxnResult mine = run(t, create_req("/l/n-", true, true), 7);
  ASSERT_EQ(mine.error, ZkError::kOk);
  EXPECT_EQ(mine.stat.ephemeral_owner, 7);
  EXPECT_EQ(t.ephemerals_of(7), std::vector<std::string>{"/l/n-0000000000"});
  Request close;
  close.kind = OpKind::kCloseSession;
  const TxnResult closed = run(t, close, 7);
  EXPECT_EQ(t.exists("/l/n-0000000000").error, ZkError::kNoNode);
  EXPECT_FALSE(t.has_session(7));
  ASSERT_EQ(closed.events.size(), 2u);
  EXPECT_EQ(closed.events[0].type, ZkEventType::kDeleted);
  EXPECT_EQ(closed.events[1].type, ZkEventType::kChildrenChanged);
}

TEST(ZkWatchManager, WatchesFireOnceAndDeletionIsHeardOnce) {
  WatchManager w;
  w.add_data_watch("/a", 1);
  w.add_child_watch("/a", 1);
  w.add_data_watch("/a", 2);
  const auto fired = w.trigger({ZkEventType::kDeleted, "/a"});
  ASSERT_EQ(fired.size(), 2u);
  EXPECT_EQ(fired[0].first, 1u);
  EXPECT_EQ(fired[1].first, 2u);
  EXPECT_TRUE(w.trigger({ZkEventType::kDeleted, "/a"}).empty());
  EXPECT_EQ(w.watch_count(), 0u);
}

// ---------------------------------------------------------------- the ensemble in a World

// A run of the lock workload on a simulated ensemble, built by hand the way
// the runner's backend seam will: declaration order is teardown order in
// reverse, so the World (declared last) goes first.
class ZkRun : public harness::Truth {
 public:
  ZkRun(uint64_t seed, ZkParams params, int clients, Duration length)
      : length_(length), clients_(clients) {
    world_ = std::make_unique<World>(WorldOptions{.seed = seed});
    net_ = std::make_unique<Network>(*world_, world_->rng().split("network"));
    deployment_ = std::make_unique<ZkDeployment>(*world_, *net_, params);
    for (int i = 0; i < clients; ++i) {
      nodes_.push_back(std::make_unique<Node>(*world_, harness::client_label(i)));
      Node& node = *nodes_.back();
      auto env = std::make_unique<ClientEnv>(*world_, node, world_->rng().split(node.name()),
                                             std::vector<std::unique_ptr<RedisConnection>>{});
      auto zk = deployment_->connect_client(node, world_->rng().split(node.name() + "/zk"));
      zk_.push_back(zk.get());
      env->set_zk(std::move(zk));
      envs_.push_back(std::move(env));
    }
  }
  ~ZkRun() override { world_->shutdown(); }

  World& world() { return *world_; }
  Network& net() { return *net_; }
  ZkDeployment& deployment() { return *deployment_; }
  Node& client(int i) { return *nodes_[i]; }
  ZkClient& zk(int i) { return *zk_[i]; }
  ClientEnv& env(int i) { return *envs_[i]; }

  // Runs the acquire/hold/release loop on every client for the run's length.
  harness::History run_workload(algorithms::LockAlgorithm& algorithm,
                                const harness::WorkloadParams& params) {
    for (int i = 0; i < clients_; ++i) {
      ClientEnv* env = envs_[i].get();
      world_->spawn(nodes_[i]->name(), nodes_[i].get(), [this, env, &algorithm, &params, i] {
        harness::run_client(*env, algorithm, i, params, *this);
      });
    }
    world_->run_until(TimePoint{} + length_);
    EXPECT_TRUE(world_->errors().empty()) << world_->errors().front();
    return recorder_.finish(world_->now());
  }

  TimePoint true_now() override { return world_->now(); }
  bool stopping() override { return world_->now() >= TimePoint{} + length_; }
  int64_t fresh_process() override { return next_process_++; }
  int64_t record(harness::Op op, bool begin_hold, bool end_hold) override {
    op.time_ns = world_->now().ns;
    const int64_t index = recorder_.record(op);
    if (begin_hold) recorder_.begin_hold(op.client, op.process, world_->now(), index);
    if (end_hold) {
      recorder_.end_hold(op.client, world_->now(), index,
                         harness::HeldInterval::EndReason::kRelease);
    }
    return index;
  }
  int current_holder() const {
    for (int c = 0; c < clients_; ++c) {
      if (recorder_.holding(c)) return c;
    }
    return -1;
  }

 private:
  Duration length_;
  int clients_;
  int64_t next_process_ = 1000;
  harness::HistoryRecorder recorder_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<ClientEnv>> envs_;
  std::vector<ZkClient*> zk_;
  std::unique_ptr<ZkDeployment> deployment_;
  std::unique_ptr<Network> net_;
  std::unique_ptr<World> world_;
};

// Two belief intervals overlapping in true time: a mutual-exclusion violation.
bool overlaps(const harness::History& h) {
  for (size_t i = 0; i < h.held.size(); ++i) {
    for (size_t j = i + 1; j < h.held.size(); ++j) {
      if (h.held[i].client != h.held[j].client && h.held[i].start < h.held[j].end &&
          h.held[j].start < h.held[i].end) {
        return true;
      }
    }
  }
  return false;
}

std::unique_ptr<algorithms::LockAlgorithm> make(const std::string& name) {
  for (const auto& spec : algorithms::zk_algorithm_specs()) {
    if (spec.name == name) return spec.make({}, "params.");
  }
  return nullptr;
}

harness::WorkloadParams workload(int clients) {
  harness::WorkloadParams w;
  w.clients = clients;
  w.hold_min = Duration::millis(200);
  w.hold_max = Duration::millis(800);
  return w;
}

TEST(ZkSession, TimeoutIsClampedToTwoAndTwentyTicks) {
  for (const auto& [asked, granted] :
       std::vector<std::pair<Duration, Duration>>{{Duration::millis(100), Duration::seconds(4)},
                                                  {Duration::seconds(10), Duration::seconds(10)},
                                                  {Duration::seconds(90), Duration::seconds(40)}}) {
    ZkParams p;
    p.session_timeout = asked;
    ZkRun run(1, p, 1, Duration::seconds(5));
    ZkError e = ZkError::kSystemError;
    run.world().spawn("c1", &run.client(0), [&] { e = run.zk(0).connect(); });
    run.world().run_until(TimePoint{} + Duration::seconds(5));
    EXPECT_EQ(e, ZkError::kOk);
    EXPECT_EQ(run.zk(0).negotiated_timeout(), granted);
    EXPECT_EQ(run.deployment().negotiated_timeout(), granted);
  }
}

// The one-line message a bad value gives, or "" when it is accepted.
std::string error_of(const ZkParams& p) {
  try {
    p.validate();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ZkParams, BadValuesNameTheField) {
  ZkParams p;
  EXPECT_EQ(error_of(p), "");
  p.servers = 4;
  EXPECT_NE(error_of(p).find("zookeeper.servers"), std::string::npos) << error_of(p);
  p.servers = 0;
  EXPECT_NE(error_of(p).find("zookeeper.servers"), std::string::npos) << error_of(p);
  p = ZkParams{};
  p.session_timeout = Duration::zero();
  EXPECT_NE(error_of(p).find("zookeeper.session_timeout"), std::string::npos) << error_of(p);
  p.session_timeout = Duration::millis(-5);
  EXPECT_NE(error_of(p).find("positive duration"), std::string::npos) << error_of(p);
}

TEST(ZkSession, ExpiresOnATickBoundaryAfterTheLastPacketAndTakesItsEphemerals) {
  ZkParams p;
  p.servers = 1;
  p.tick = Duration::millis(200);
  p.session_timeout = Duration::seconds(2);
  ZkRun run(3, p, 2, Duration::seconds(20));
  std::string node;
  run.world().spawn("c1", &run.client(0), [&] {
    ASSERT_EQ(run.zk(0).create("/e", "", {.ephemeral = true}).error, ZkError::kOk);
    node = "/e";
  });
  // Freeze c1 at 3 s: no more pings. Its session must go by 3 s + T + a tick.
  run.world().at(TimePoint{} + Duration::seconds(3), [&] { run.client(0).pause(); });
  run.world().run_until(TimePoint{} + Duration::seconds(3));
  ZkServer& leader = run.deployment().ensemble().server(1);
  const auto last = leader.session_last_heard_ns(run.zk(0).session_id());
  const auto deadline = leader.session_deadline_ns(run.zk(0).session_id());
  ASSERT_TRUE(last && deadline);
  EXPECT_EQ(*deadline, ((*last + p.session_timeout.ns) / p.tick.ns + 1) * p.tick.ns);
  run.world().run_until(TimePoint{} + Duration::nanos(*deadline - 1));
  EXPECT_EQ(leader.tree().exists("/e").error, ZkError::kOk);
  run.world().run_until(TimePoint{} + Duration::nanos(*deadline) + Duration::millis(5));
  EXPECT_EQ(leader.tree().exists("/e").error, ZkError::kNoNode);
  // On resuming, the client learns of the expiry when it reconnects.
  run.client(0).resume();
  run.world().run_until(TimePoint{} + Duration::seconds(10));
  EXPECT_EQ(run.zk(0).state(), ZkSessionState::kExpired);
}

TEST(ZkSession, AServerClockJumpChangesNothing) {
  ZkParams p;
  p.servers = 3;
  p.tick = Duration::millis(200);
  p.session_timeout = Duration::seconds(2);
  ZkRun run(5, p, 1, Duration::seconds(20));
  run.world().spawn("c1", &run.client(0), [&] {
    ASSERT_EQ(run.zk(0).create("/e", "", {.ephemeral = true}).error, ZkError::kOk);
  });
  run.world().at(TimePoint{} + Duration::seconds(2), [&] {
    for (int id = 1; id <= 3; ++id) {
      run.deployment().ensemble().server(id).node().clock().jump(run.world().now(),
                                                                 Duration::seconds(3600));
    }
  });
  run.world().run_until(TimePoint{} + Duration::seconds(20));
  EXPECT_EQ(run.zk(0).state(), ZkSessionState::kConnected);
  EXPECT_EQ(run.deployment().ensemble().server(3).tree().exists("/e").error, ZkError::kOk);
}

class ZkSafety : public ::testing::TestWithParam<const char*> {};

TEST_P(ZkSafety, NoOverlapWithoutFaultsOverManySeeds) {
  const auto algorithm = make(GetParam());
  ASSERT_NE(algorithm, nullptr);
  int acquired = 0;
  for (uint64_t seed = 1; seed <= 1000; ++seed) {
    ZkParams p;
    p.servers = seed % 2 == 0 ? 3 : 5;
    ZkRun run(seed, p, 4, Duration::seconds(20));
    const auto w = workload(4);
    const harness::History h = run.run_workload(*algorithm, w);
    EXPECT_FALSE(overlaps(h)) << GetParam() << " seed " << seed;
    acquired += static_cast<int>(h.held.size());
  }
  EXPECT_GT(acquired, 1000 * 10);  // the lock is actually taken, many times
}

INSTANTIATE_TEST_SUITE_P(Variants, ZkSafety,
                         ::testing::Values("zk-recipe", "zk-curator", "zk-herd"));

TEST(ZkSafety, LeaderCrashesAndServerClockJumpsAreSafeForCurator) {
  const auto algorithm = make("zk-curator");
  for (uint64_t seed = 1; seed <= 1000; ++seed) {
    ZkParams p;
    ZkRun run(seed, p, 3, Duration::seconds(40));
    // Every server's wall clock jumps (forward or back, by seed) at 3 s...
    run.world().at(TimePoint{} + Duration::seconds(3), [&run, seed] {
      const Duration by = seed % 2 == 0 ? Duration::seconds(3600) : -Duration::seconds(600);
      for (int id = 1; id <= 3; ++id) {
        run.deployment().ensemble().server(id).node().clock().jump(run.world().now(), by);
      }
    });
    // ...and the leader crashes at 5 s, back 5 s later.
    run.world().at(TimePoint{} + Duration::seconds(5), [&] {
      ZkServer* leader = run.deployment().ensemble().serving_leader();
      ASSERT_NE(leader, nullptr);
      Node* n = &leader->node();
      n->crash();
      run.world().after(Duration::seconds(5), [n] { n->restart(); });
    });
    const harness::History h = run.run_workload(*algorithm, workload(3));
    EXPECT_FALSE(overlaps(h)) << "seed " << seed;
    EXPECT_GE(run.deployment().ensemble().elections(), 2) << "seed " << seed;
    EXPECT_GT(h.held.size(), 5u) << "seed " << seed;
  }
}

// ---------------------------------------------------------------- the pause boundary

// Pauses whoever holds the lock at 5 s for `pause`; nullopt when nobody held
// it then (the seed is skipped), else whether two beliefs overlapped.
std::optional<bool> pause_holder(const std::string& variant, uint64_t seed, Duration pause) {
  const auto algorithm = make(variant);
  ZkParams p;  // tick 2 s, T 10 s, 3 servers
  ZkRun run(seed, p, 3, Duration::seconds(40));
  bool paused = false;
  run.world().at(TimePoint{} + Duration::seconds(5), [&] {
    const int holder = run.current_holder();
    if (holder < 0) return;
    paused = true;
    Node* n = &run.client(holder);
    n->pause();
    run.world().after(pause, [n] { n->resume(); });
  });
  harness::WorkloadParams w = workload(3);
  w.hold_min = Duration::millis(500);
  w.hold_max = Duration::millis(1500);
  const harness::History h = run.run_workload(*algorithm, w);
  if (!paused) return std::nullopt;
  return overlaps(h);
}

class ZkPauseBoundary : public ::testing::TestWithParam<const char*> {};

TEST_P(ZkPauseBoundary, HalfTheTimeoutIsSafeAndTimeoutPlusATickIsNot) {
  const ZkParams p;
  const Duration t = p.negotiate(p.session_timeout);
  int checked = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const auto safe = pause_holder(GetParam(), seed, t / 2);
    const auto unsafe = pause_holder(GetParam(), seed, t + p.tick);
    if (!safe || !unsafe) continue;
    ++checked;
    EXPECT_FALSE(*safe) << GetParam() << " seed " << seed << ": a pause of T/2 overlapped";
    EXPECT_TRUE(*unsafe) << GetParam() << " seed " << seed << ": a pause of T + tick was safe";
  }
  EXPECT_GE(checked, 20);
}

// A paused process notices nothing: Curator's connection-state rule does not
// save it, any more than the bare recipe.
INSTANTIATE_TEST_SUITE_P(Variants, ZkPauseBoundary, ::testing::Values("zk-recipe", "zk-curator"));

// Between 2T/3 and T the outcome depends on where the holder's last
// heartbeat fell before the pause: the leader's deadline is that packet + T,
// rounded up to the tick, so the same pause ends before the deadline on one
// seed and after it on another.
struct PauseDetail {
  bool overlap = false, expired_before_resume = false;  // a session expired while it slept
};

std::optional<PauseDetail> pause_holder_detail(const std::string& variant, uint64_t seed,
                                               Duration pause) {
  const auto algorithm = make(variant);
  ZkParams p;  // tick 2 s, T 10 s, 3 servers
  const Duration t = p.negotiate(p.session_timeout);
  ZkRun run(seed, p, 3, Duration::seconds(40));
  const TimePoint pause_at = TimePoint{} + Duration::seconds(5);
  bool paused = false;
  run.world().at(pause_at, [&] {
    const int holder = run.current_holder();
    if (holder < 0) return;
    paused = true;
    Node* n = &run.client(holder);
    n->pause();
    run.world().after(pause, [n] { n->resume(); });
  });
  // Holds of 2 s to 6 s: the holder's last packet before the pause is its
  // acquire or, past T/3 of silence, a ping, so it falls anywhere in the
  // T/3 before the pause, and the tick-rounded deadline moves with it.
  harness::WorkloadParams w = workload(3);
  w.hold_min = Duration::seconds(2);
  w.hold_max = Duration::seconds(6);
  const harness::History h = run.run_workload(*algorithm, w);
  if (!paused) return std::nullopt;
  PauseDetail d;
  d.overlap = overlaps(h);
  for (const SessionExpiry& e : run.deployment().ensemble().expiries()) {
    // The deadline is the last packet + T, rounded up to the next tick.
    EXPECT_EQ(e.deadline_ns, ((e.last_heard_ns + t.ns) / p.tick.ns + 1) * p.tick.ns);
    EXPECT_GT(e.at.ns, e.last_heard_ns + t.ns - p.tick.ns);
    if (e.at < pause_at + pause) d.expired_before_resume = true;
  }
  return d;
}

TEST(ZkPauseBoundary, BetweenTwoThirdsAndTBothOutcomesOccurByTheLastHeartbeat) {
  const ZkParams p;
  const Duration t = p.negotiate(p.session_timeout);
  for (const char* variant : {"zk-recipe", "zk-curator"}) {
    int safe = 0;
    int unsafe = 0;
    // Paused at 5 s, resumed at 14.5 s or 14.75 s: a last packet before 4 s
    // gives a deadline of 14 s (expired while asleep), one from 4 s on 16 s.
    for (const Duration pause : {t * 19 / 20, t * 39 / 40}) {
      for (uint64_t seed = 1; seed <= 30; ++seed) {
        const auto d = pause_holder_detail(variant, seed, pause);
        if (!d) continue;
        // An overlap needs the session to have expired while the holder slept.
        if (d->overlap) {
          EXPECT_TRUE(d->expired_before_resume) << variant << " seed " << seed;
        }
        (d->overlap ? unsafe : safe) += 1;
      }
    }
    EXPECT_GT(safe, 0) << variant << ": no pause in (2T/3, T) was safe";
    EXPECT_GT(unsafe, 0) << variant << ": no pause in (2T/3, T) was a violation";
  }
}

// ---------------------------------------------------------------- the lost create reply

struct LostReplyOutcome {
  algorithms::Outcome first = algorithms::Outcome::kFail;   // c1's acquire
  algorithms::Outcome second = algorithms::Outcome::kFail;  // c2's, 20 s later
  size_t children_at_end = 0;
  bool free_at_end = false;
  bool cut = false;  // the partition really hit between commit and reply
};

// c1 acquires at 1 s; once its node is committed, c1 is cut off from every
// server for 8 s: past the client's 2T/3 (it drops the connection and the reply
// TCP held), not past the session (T = 10 s). c1 releases whatever
// it got and then idles with its session alive; c2 tries at 20 s.
LostReplyOutcome lose_create_reply(const std::string& variant) {
  const auto algorithm = make(variant);
  ZkParams p;
  ZkRun run(11, p, 2, Duration::seconds(60));
  const std::string lock = algorithms::zk_lock_path("r");
  LostReplyOutcome out;
  run.world().spawn("c1", &run.client(0), [&] {
    ASSERT_EQ(run.zk(0).connect(), ZkError::kOk);
    run.env(0).sleep(Duration::seconds(1));
    const auto r = algorithm->acquire(run.env(0), "r");
    out.first = r.outcome;
    if (r.outcome == algorithms::Outcome::kOk) algorithm->release(run.env(0), r.lease);
  });
  run.world().spawn("c2", &run.client(1), [&] {
    run.env(1).sleep(Duration::seconds(20));
    const auto r = algorithm->acquire(run.env(1), "r");
    out.second = r.outcome;
    if (r.outcome == algorithms::Outcome::kOk) algorithm->release(run.env(1), r.lease);
  });
  // Watch the leader's tree closely from 1 s on; cut c1 off at the commit.
  auto cut = std::make_shared<std::function<void()>>();
  *cut = [&run, &out, lock, cut] {
    ZkServer* leader = run.deployment().ensemble().serving_leader();
    if (leader != nullptr && !leader->tree().children(lock).children.empty()) {
      std::vector<const Node*> servers;
      for (Node* n : run.deployment().nodes()) servers.push_back(n);
      run.net().partition({&run.client(0)}, servers);
      out.cut = true;
      run.world().after(Duration::seconds(8), [&run] { run.net().heal(); });
      return;
    }
    if (run.world().now() < TimePoint{} + Duration::seconds(2)) {
      run.world().after(Duration::micros(10), *cut);
    }
  };
  run.world().at(TimePoint{} + Duration::seconds(1), *cut);
  run.world().run_until(TimePoint{} + Duration::seconds(60));
  EXPECT_TRUE(run.world().errors().empty());
  ZkServer* leader = run.deployment().ensemble().serving_leader();
  EXPECT_NE(leader, nullptr);
  if (leader != nullptr) out.children_at_end = leader->tree().children(lock).children.size();
  out.free_at_end = run.deployment().lock_free_for_fresh_contender(lock);
  return out;
}

TEST(ZkLostCreateReply, TheRecipesOrphanBlocksEveryoneWhileItsSessionLives) {
  const LostReplyOutcome o = lose_create_reply("zk-recipe");
  ASSERT_TRUE(o.cut);
  // c1 waited on its own orphan until its bounded wait ran out...
  EXPECT_EQ(o.first, algorithms::Outcome::kFail);
  // ...and c2, 20 s later, waits behind it too: a stall, not an expiry.
  EXPECT_EQ(o.second, algorithms::Outcome::kFail);
  EXPECT_EQ(o.children_at_end, 1u);  // the orphan, at 60 s, its session alive
  EXPECT_FALSE(o.free_at_end);
}

TEST(ZkLostCreateReply, CuratorsProtectedModeFindsItsOwnNode) {
  const LostReplyOutcome o = lose_create_reply("zk-curator");
  ASSERT_TRUE(o.cut);
  EXPECT_EQ(o.first, algorithms::Outcome::kOk);
  EXPECT_EQ(o.second, algorithms::Outcome::kOk);
  EXPECT_EQ(o.children_at_end, 0u);
  EXPECT_TRUE(o.free_at_end);
}

// ---------------------------------------------------------------- a partitioned holder

// Cuts whoever holds the lock at 5 s off from every server for 15 s (past
// T = 10 s); nullopt when nobody held it, else whether beliefs overlapped.
std::optional<bool> partition_holder(const std::string& variant, uint64_t seed) {
  const auto algorithm = make(variant);
  ZkParams p;
  ZkRun run(seed, p, 3, Duration::seconds(60));
  bool cut = false;
  run.world().at(TimePoint{} + Duration::seconds(5), [&] {
    const int holder = run.current_holder();
    if (holder < 0) return;
    cut = true;
    std::vector<const Node*> servers;
    for (Node* n : run.deployment().nodes()) servers.push_back(n);
    run.net().partition({&run.client(holder)}, servers);
    run.world().after(Duration::seconds(15), [&run] { run.net().heal(); });
  });
  harness::WorkloadParams w = workload(3);
  // Holds long enough to outlast the session: the recipe is still working
  // when its session expires.
  w.hold_min = Duration::seconds(25);
  w.hold_max = Duration::seconds(30);
  const harness::History h = run.run_workload(*algorithm, w);
  if (!cut) return std::nullopt;
  return overlaps(h);
}

TEST(ZkPartition, TheRecipeKeepsWorkingAndCuratorStopsAtSuspended) {
  int checked = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const auto recipe = partition_holder("zk-recipe", seed);
    const auto curator = partition_holder("zk-curator", seed);
    if (!recipe || !curator) continue;
    ++checked;
    EXPECT_TRUE(*recipe) << "seed " << seed << ": the recipe's partitioned holder did not overlap";
    EXPECT_FALSE(*curator) << "seed " << seed << ": Curator's partitioned holder overlapped";
  }
  EXPECT_GE(checked, 15);
}

}  // namespace
}  // namespace locksim::sim::zookeeper
