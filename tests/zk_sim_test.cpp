// The simulated ZooKeeper ensemble and the three lock variants, run in a
// sim::World directly (without the runner): the DataTree alone, sessions and
// their clamp, and the recipes' safety (the pause boundary and the lost-reply
// stall: zk_sim_faults_test.cpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "env/parse.h"
#include "env/zk_connection.h"
#include "history/history.h"
#include "sim/zookeeper/data_tree.h"
#include "tests/zk_sim_run.h"

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

// A new session's request (run it with the session's id).
Request session_req() {
  Request r;
  r.kind = OpKind::kCreateSession;
  r.session_timeout = Duration::seconds(4);
  return r;
}

// Prepares and applies one request, as the leader and a server would.
TxnResult run(DataTree& t, const Request& r, SessionId s = 0) {
  return t.apply(t.prepare(r, s, t.last_zxid() + 1, 0));
}

// The suffix a sequential create appends is printf's "%010d" (formatted by
// hand for n >= 0), and zk_sequence_of reads it back.
TEST(ZkSequence, SuffixIsPrintfsTenDigitsAndReadsBack) {
  for (const int32_t n : {0, 1, 42, 999'999'999, 1'000'000'000, INT32_MAX, -1, INT32_MIN}) {
    char printed[16];
    std::snprintf(printed, sizeof printed, "%010d", n);
    EXPECT_EQ(zk_sequence_suffix(n), printed) << n;
    if (n >= 0) {
      EXPECT_EQ(zk_sequence_of("lock-" + zk_sequence_suffix(n)), n);
    }
  }
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
  run(t, session_req(), 7);
  ASSERT_EQ(run(t, create_req("/e", true), 7).error, ZkError::kOk);
  EXPECT_EQ(run(t, create_req("/e/child")).error, ZkError::kNoChildrenForEphemerals);
}

TEST(ZkDataTree, ClosingASessionDeletesItsEphemeralsAndFiresTheirEvents) {
  DataTree t;
  run(t, session_req(), 7);
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

// A delete keeps its map and set entries for the next create
// (DataTree::Spares): a node made in a reused entry must carry nothing of
// the one before it. A copy of a tree starts with no spares, so the same
// txns applied to a tree and to its copy compare entries reused with new.
TEST(ZkDataTree, ANodeMadeInAReusedEntryKeepsNothingOfTheDeletedOne) {
  DataTree reused;
  run(reused, session_req(), 7);
  run(reused, session_req(), 9);
  ASSERT_EQ(run(reused, create_req("/l")).error, ZkError::kOk);
  ASSERT_EQ(run(reused, create_req("/l/p")).error, ZkError::kOk);
  // Ephemeral nodes with data, then gone: their entries are kept.
  for (const char* name : {"/l/p/first-of-a-longer-name", "/l/second-of-a-longer-name"}) {
    Request r = create_req(name, true);
    r.data = "data past the fifteen characters a string keeps inline";
    ASSERT_EQ(run(reused, r, 7).error, ZkError::kOk);
    ASSERT_EQ(run(reused, delete_req(name)).error, ZkError::kOk);
  }
  // And last (so its entry is the first reused) a node whose data changed
  // and whose child came and went: a version, a cversion and a sequence
  // counter that a node made in its entry must not inherit.
  ASSERT_EQ(run(reused, create_req("/l/q")).error, ZkError::kOk);
  Request set;
  set.kind = OpKind::kSetData;
  set.path = "/l/q";
  set.data = "changed data, again past what a string keeps inline";
  ASSERT_EQ(run(reused, set).error, ZkError::kOk);
  ASSERT_EQ(run(reused, create_req("/l/q/c-", false, true)).error, ZkError::kOk);
  ASSERT_EQ(run(reused, delete_req("/l/q/c-0000000000")).error, ZkError::kOk);
  ASSERT_EQ(run(reused, delete_req("/l/q")).error, ZkError::kOk);
  DataTree fresh = reused;  // the same tree, no spares
  ASSERT_TRUE(fresh == reused);
  const std::vector<std::pair<Request, SessionId>> txns = {
      {create_req("/l/b"), 8},                  // persistent, no data
      {create_req("/l/b/s-", false, true), 8},  // its first sequential child: -0000000000
      {create_req("/l/p/n-", true, true), 9},   // in a reused set of a session's ephemerals
      {create_req("/l/p/n-", true, true), 9},
  };
  for (const auto& [request, session] : txns) {
    const TxnResult a = run(reused, request, session);
    const TxnResult b = run(fresh, request, session);
    ASSERT_EQ(a.error, ZkError::kOk);
    EXPECT_EQ(a.path, b.path);
    EXPECT_TRUE(a.stat == b.stat) << a.path;
    // The events come in pooled room too (TxnResult gives it back): each
    // names the node made and its parent, whatever the room held before.
    ASSERT_EQ(a.events.size(), 2u);
    EXPECT_EQ(a.events[0].type, ZkEventType::kCreated);
    EXPECT_EQ(a.events[0].path, a.path);
    EXPECT_EQ(a.events[1].type, ZkEventType::kChildrenChanged);
    EXPECT_EQ(a.events[1].path, a.path.substr(0, a.path.rfind('/')));
  }
  EXPECT_TRUE(fresh == reused);
  EXPECT_EQ(reused.exists("/l/b/s-0000000000").error, ZkError::kOk);
  EXPECT_EQ(reused.exists("/l/b").stat.version, 0);
  EXPECT_EQ(reused.exists("/l/b").stat.ephemeral_owner, 0);
  EXPECT_EQ(reused.data("/l/b").data, "");
  EXPECT_TRUE(reused.ephemerals_of(7).empty());
  EXPECT_EQ(reused.ephemerals_of(9),
            (std::vector<std::string>{"/l/p/n-0000000001", "/l/p/n-0000000002"}));
  EXPECT_EQ(reused.children("/l/p").children, fresh.children("/l/p").children);
  // getChildren's names come in vectors an earlier listing of the same
  // length gave back, still holding its names: only this node's may show.
  { const ZkChildrenResult earlier = reused.children("/l"); }  // "b", "p": two go back
  EXPECT_EQ(reused.children("/l/p").children,
            (std::vector<std::string>{"n-0000000001", "n-0000000002"}));
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
  // The leader's clock runs at true time (no drift) from its tick phase.
  const int64_t phase_ns = leader.mono_ns() - run.world().now().ns;
  ASSERT_TRUE(phase_ns >= 0 && phase_ns < p.tick.ns);
  const TimePoint expiry = TimePoint{} + Duration::nanos(*deadline - phase_ns);
  run.world().run_until(expiry - Duration::nanos(1));
  EXPECT_EQ(leader.tree().exists("/e").error, ZkError::kOk);
  run.world().run_until(expiry + Duration::millis(5));
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
    const history::History h = run.run_workload(*algorithm, w);
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
    const history::History h = run.run_workload(*algorithm, workload(3));
    EXPECT_FALSE(overlaps(h)) << "seed " << seed;
    EXPECT_GE(run.deployment().ensemble().elections(), 2) << "seed " << seed;
    EXPECT_GT(h.held.size(), 5u) << "seed " << seed;
  }
}

}  // namespace
}  // namespace locksim::sim::zookeeper
