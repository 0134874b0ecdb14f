// The simulated Redis deployment (sim/redis/redis_node.*): asynchronous
// replication with lag, expiry as absolute time on the master's clock,
// read-only replicas, persistence across crash-restart, Sentinel-like
// failover ("last failover wins"), and clients that follow the published
// master: the failure modes lock algorithms are judged against, each pinned to exact virtual times.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "sim/network.h"
#include "sim/node.h"
#include "sim/redis/redis_node.h"
#include "sim/redis/server.h"
#include "sim/redis/topology.h"
#include "sim/world.h"

namespace locksim {
// Readable failures: gtest prints replies as redis-cli would.
inline void PrintTo(const Reply& reply, std::ostream* os) {
  *os << reply.to_string();
}
}  // namespace locksim

namespace locksim::sim::redis {
namespace {

using Argv = std::vector<std::string>;
using Keys = std::map<std::string, Server::Entry>;

constexpr TimePoint ms(int64_t v) {
  return TimePoint{} + Duration::millis(v);
}
constexpr Duration kOneNs = Duration::nanos(1);

// Zero network latency, so the only delay between a write and a replica is
// replication_lag itself and the tests can name exact instants.
constexpr LinkParams kInstantLink{Duration::zero(), Duration::zero(), 0.0};

const char kReadonly[] = "READONLY You can't write against a read only replica.";

// One group laid out as harness/sim_runner.cpp builds it: members[0] is the
// initial master, the rest its replicas, watched by a sentinel node.
struct Sim {
  Sim(const Topology& topology, int replicas, std::vector<Duration> replica_offsets = {},
      uint64_t seed = 1, const LinkParams& link = kInstantLink)
      : world(WorldOptions{.seed = seed}),
        net(world, world.rng().split("network")),
        sentinel(world, "sentinel"),
        client(world, "c1") {
    net.set_default_link(link);
    std::vector<RedisNode*> members;
    for (int i = 0; i <= replicas; ++i) {
      const std::string name = i == 0 ? "redis-1" : "redis-1-r" + std::to_string(i);
      const size_t offset_index = static_cast<size_t>(i) - 1;
      const Duration offset = i > 0 && offset_index < replica_offsets.size()
                                  ? replica_offsets[offset_index]
                                  : Duration::zero();
      nodes.push_back(std::make_unique<RedisNode>(world, net, name, world.rng().split(name).next(),
                                                  topology, offset));
      members.push_back(nodes.back().get());
    }
    group = std::make_unique<ReplicaGroup>(world, net, "redis-1", members, &sentinel, topology);
  }
  // Fibers are joined while everything they may touch is still alive.
  ~Sim() { world.shutdown(); }

  RedisNode& master() { return *nodes[0]; }
  RedisNode& replica(size_t i) { return *nodes.at(i); }  // 1-based, as the names
  size_t size() const { return nodes.size(); }

  // Runs `argv` at node `n` at true time `t`, as a request arriving there
  // would (on the main context, from a World event), and returns its reply.
  Reply exec(RedisNode& n, TimePoint t, const Argv& argv) {
    Reply reply = Reply::io_error("not run");
    world.at(t, [&] { reply = n.execute(argv); });
    world.run_until(t);
    return reply;
  }
  void at(TimePoint t, std::function<void()> action) { world.at(t, std::move(action)); }
  void run_until(TimePoint t) { world.run_until(t); }

  World world;
  Network net;
  Node sentinel;
  Node client;
  std::vector<std::unique_ptr<RedisNode>> nodes;
  std::unique_ptr<ReplicaGroup> group;
};

bool has_key(RedisNode& n, const std::string& key) {
  return n.server().keys().count(key) == 1;
}

Topology failover_topology() {
  Topology t;
  t.replication_lag = Duration::millis(10);
  t.failover = true;
  t.down_after = Duration::seconds(1);
  t.discovery_delay = Duration::millis(500);
  return t;
}

// --- 1, 2: asynchronous replication -------------------------------------

TEST(RedisReplication, WriteReachesReplicaExactlyReplicationLagLater) {
  Topology topology;
  topology.replication_lag = Duration::millis(50);
  Sim sim(topology, 1);
  RedisNode& master = sim.master();
  RedisNode& replica = sim.replica(1);

  const TimePoint write = ms(1000);
  EXPECT_EQ(sim.exec(master, write, {"SET", "k", "v"}), Reply::ok());
  EXPECT_TRUE(has_key(master, "k"));  // the master has it at once: the reply does not wait
  EXPECT_FALSE(has_key(replica, "k"));

  sim.run_until(write + topology.replication_lag - kOneNs);
  EXPECT_FALSE(has_key(replica, "k")) << "replicated before replication_lag elapsed";

  sim.run_until(write + topology.replication_lag);
  EXPECT_TRUE(has_key(replica, "k"));
  EXPECT_EQ(replica.server().keys(), master.server().keys());
  EXPECT_EQ(sim.exec(replica, write + topology.replication_lag, {"GET", "k"}), Reply::bulk("v"));
}

// A shipment held by a partition is late, not lost: it lands after the heal,
// and the replica catches up without waiting for another write.
TEST(RedisReplication, ReplicaBackFromAPartitionCatchesUpWithoutANewWrite) {
  Topology topology;
  topology.replication_lag = Duration::millis(10);
  Sim sim(topology, 1);
  RedisNode& master = sim.master();
  RedisNode& replica = sim.replica(1);
  sim.at(ms(100), [&] { sim.net.partition({&replica.node()}, {&master.node()}); });
  EXPECT_EQ(sim.exec(master, ms(200), {"SET", "k", "v"}), Reply::ok());
  sim.at(ms(1000), [&] { sim.net.heal(); });
  sim.run_until(ms(999));
  EXPECT_FALSE(has_key(replica, "k")) << "the partition holds the shipment";
  // Healed at 1 000: it leaves with the next retransmission (by 1 600).
  sim.run_until(ms(1600) + ReplicaGroup::kCheckPeriod + topology.replication_lag);
  EXPECT_TRUE(has_key(replica, "k"));
  EXPECT_EQ(replica.server().keys(), master.server().keys());
  // Caught up: no further changes while nothing is written.
  const uint64_t seq = replica.applied_seq();
  sim.run_until(ms(5000));
  EXPECT_EQ(replica.applied_seq(), seq);
}

TEST(RedisReplication, MasterCrashingBeforeTheLagNeverShipsTheWrite) {
  Topology topology;
  topology.replication_lag = Duration::millis(50);
  Sim sim(topology, 1);
  RedisNode& master = sim.master();
  RedisNode& replica = sim.replica(1);

  EXPECT_EQ(sim.exec(master, ms(1000), {"SET", "k", "v"}), Reply::ok());
  // Crash and come back (empty, persistence none) while the shipment is
  // still "in the output buffer": the restarted process must not send what
  // its previous incarnation buffered.
  sim.at(ms(1020), [&] { master.node().crash(); });
  sim.at(ms(1030), [&] { master.node().restart(); });

  sim.run_until(ms(1050));  // when the write would have been shipped
  EXPECT_FALSE(has_key(replica, "k"));
  sim.run_until(ms(5000));
  EXPECT_FALSE(has_key(replica, "k"));
  EXPECT_FALSE(has_key(master, "k"));
}

// --- 3: expiry is absolute, on the master's clock ------------------------

// SET k PX 10000 on the master at 100 ms, crash the master, let the replica
// (whose clock runs `replica_offset` ahead) be promoted, then probe GET on it
// every millisecond. Returns the first true time the key reads as gone.
TimePoint expiry_after_promotion(Duration replica_offset) {
  Sim sim(failover_topology(), 1, {replica_offset});
  RedisNode& master = sim.master();
  RedisNode& replica = sim.replica(1);

  EXPECT_EQ(sim.exec(master, ms(100), {"SET", "k", "v", "PX", "10000"}), Reply::ok());
  sim.run_until(ms(200));
  // Replicated as PXAT: the same absolute unix-ms, whatever the replica's clock says.
  EXPECT_EQ(replica.server().keys(), master.server().keys());

  sim.at(ms(500), [&] { master.node().crash(); });
  sim.run_until(ms(4000));
  EXPECT_EQ(&sim.group->current_master(), &replica);

  for (int64_t t = 4000; t <= 12000; ++t) {
    if (sim.exec(replica, ms(t), {"GET", "k"}).is_nil()) return ms(t);
  }
  ADD_FAILURE() << "the key never expired";
  return ms(0);
}

TEST(RedisReplication, PromotedReplicaWithFastClockExpiresKeysEarlyInTrueTime) {
  // With equal clocks the promoted replica expires the key exactly when the
  // master would have: 100 ms + 10 s, gone from the first ms after it.
  const TimePoint same_clock = expiry_after_promotion(Duration::zero());
  EXPECT_EQ(same_clock, ms(10'101));
  // A clock 5 s ahead reads the master's absolute expiry 5 s too early: a
  // lease the client still believes in is gone in true time.
  const TimePoint fast_clock = expiry_after_promotion(Duration::seconds(5));
  EXPECT_EQ(fast_clock, ms(5'101));
  EXPECT_EQ(same_clock - fast_clock, Duration::seconds(5));
}

// --- 4: read-only replicas and expiry on them -----------------------------

TEST(RedisReplica, RefusesWritesAndScriptsButServesReads) {
  Topology topology;
  Sim sim(topology, 1);
  RedisNode& master = sim.master();
  RedisNode& replica = sim.replica(1);

  EXPECT_EQ(sim.exec(master, ms(100), {"SET", "k", "v"}), Reply::ok());
  sim.run_until(ms(200));
  const Keys before = replica.server().keys();

  EXPECT_EQ(sim.exec(replica, ms(200), {"SET", "k", "x"}), Reply::error(kReadonly));
  EXPECT_EQ(sim.exec(replica, ms(200), {"set", "other", "x", "NX", "PX", "1000"}),
            Reply::error(kReadonly));
  EXPECT_EQ(sim.exec(replica, ms(200),
                     {"EVAL", "return redis.call('SET', KEYS[1], ARGV[1])", "1", "k", "x"}),
            Reply::error(kReadonly));
  EXPECT_EQ(sim.exec(replica, ms(200), {"DEL", "k"}), Reply::error(kReadonly));
  EXPECT_EQ(replica.server().keys(), before);

  EXPECT_EQ(sim.exec(replica, ms(200), {"GET", "k"}), Reply::bulk("v"));
  EXPECT_EQ(sim.exec(replica, ms(200), {"EXISTS", "k"}), Reply::integer_reply(1));
}

// The replica's clock runs 5 s ahead, so it judges the key expired long
// before the master does. SET at 100 ms with PX 10000: the master's expiry
// is 10 100 ms (master clock = true time); the replica reads it as expired
// from true 5 101 ms.
class ReplicaExpiry : public ::testing::Test {
 protected:
  ReplicaExpiry() : sim_(topology(), 1, {Duration::seconds(5)}) {
    EXPECT_EQ(sim_.exec(sim_.master(), ms(100), {"SET", "k", "v", "PX", "10000"}), Reply::ok());
  }
  static Topology topology() {
    Topology t;
    t.replication_lag = Duration::millis(10);
    return t;
  }

  Sim sim_;
  RedisNode& master_ = sim_.master();
  RedisNode& replica_ = sim_.replica(1);
};

TEST_F(ReplicaExpiry, HidesKeyExpiredOnItsOwnClockWithoutDeletingIt) {
  EXPECT_EQ(sim_.exec(replica_, ms(5000), {"GET", "k"}), Reply::bulk("v"));
  EXPECT_EQ(sim_.exec(replica_, ms(5200), {"GET", "k"}), Reply::nil());
  EXPECT_EQ(sim_.exec(replica_, ms(5200), {"PTTL", "k"}), Reply::integer_reply(-2));
  // Still stored: a replica never expires keys itself, it waits for the master's DEL.
  EXPECT_TRUE(has_key(replica_, "k"));
  // The master, on its own clock, still serves it.
  EXPECT_EQ(sim_.exec(master_, ms(5200), {"GET", "k"}), Reply::bulk("v"));
}

TEST_F(ReplicaExpiry, MastersLazyExpiryRemovesTheKeyOnTheReplica) {
  // 10 150 ms: expired on the master's clock, before its next active expiry
  // cycle (they run on the 100 ms marks), so only the GET below deletes it.
  const TimePoint get = ms(10'150);
  EXPECT_EQ(sim_.exec(master_, get, {"GET", "k"}), Reply::nil());
  EXPECT_FALSE(has_key(master_, "k"));
  sim_.run_until(get + Duration::millis(10) - kOneNs);
  EXPECT_TRUE(has_key(replica_, "k"));
  sim_.run_until(get + Duration::millis(10));
  EXPECT_FALSE(has_key(replica_, "k"));
}

TEST_F(ReplicaExpiry, MastersActiveExpiryRemovesTheKeyOnTheReplica) {
  // Nobody reads the key: the master's cycle at 10 200 ms (the first after
  // 10 100 ms; 10 100 itself is not yet "strictly after") deletes it.
  sim_.run_until(ms(10'200) - kOneNs);
  EXPECT_TRUE(has_key(master_, "k"));
  EXPECT_TRUE(has_key(replica_, "k"));
  sim_.run_until(ms(10'200));
  EXPECT_FALSE(has_key(master_, "k"));
  sim_.run_until(ms(10'210) - kOneNs);
  EXPECT_TRUE(has_key(replica_, "k"));
  sim_.run_until(ms(10'210));
  EXPECT_FALSE(has_key(replica_, "k"));
}

// --- 5: persistence across crash-restart ----------------------------------

// One master, no replicas. Writes at 300 ms (a=v1, lease with PX 60000,
// mortal with PX 3500, i.e. expiring at 3 800 ms), 2 500 ms (a=v2), 3 200 ms
// (b), and c right before the crash at 3 500 ms; restart at 4 500 ms, after
// mortal's expiry. AOF everysec fsyncs on each whole second; RDB snapshots
// every 2 s. Returns the value each key reads as after the restart.
std::map<std::string, std::string> survivors(Persistence persistence) {
  Topology topology;
  topology.persistence = persistence;
  topology.rdb_interval = Duration::seconds(2);
  Sim sim(topology, 0);
  RedisNode& node = sim.master();

  EXPECT_EQ(sim.exec(node, ms(300), {"SET", "a", "v1"}), Reply::ok());
  EXPECT_EQ(sim.exec(node, ms(300), {"SET", "lease", "l", "PX", "60000"}), Reply::ok());
  EXPECT_EQ(sim.exec(node, ms(300), {"SET", "mortal", "m", "PX", "3500"}), Reply::ok());
  EXPECT_EQ(sim.exec(node, ms(2500), {"SET", "a", "v2"}), Reply::ok());
  EXPECT_EQ(sim.exec(node, ms(3200), {"SET", "b", "v"}), Reply::ok());
  Reply last = Reply::nil();
  sim.at(ms(3500), [&] {
    last = node.execute({"SET", "c", "v"});
    node.node().crash();  // right after acknowledging c
  });
  sim.at(ms(4500), [&] { node.node().restart(); });
  sim.run_until(ms(4500));
  EXPECT_EQ(last, Reply::ok());

  std::map<std::string, std::string> out;
  for (const char* key : {"a", "b", "c", "lease", "mortal"}) {
    const Reply r = sim.exec(node, ms(4500), {"GET", key});
    if (!r.is_nil()) out[key] = r.text;
  }
  if (out.count("lease") == 1) {
    // The expiry came back as the same absolute time, not a fresh TTL.
    EXPECT_EQ(sim.exec(node, ms(4500), {"PTTL", "lease"}), Reply::integer_reply(60'300 - 4'500));
  }
  return out;
}

using Survivors = std::map<std::string, std::string>;

TEST(RedisPersistence, NoneComesBackEmpty) {
  EXPECT_EQ(survivors(Persistence::kNone), Survivors{});
}

TEST(RedisPersistence, AofAlwaysKeepsEveryAcknowledgedWrite) {
  EXPECT_EQ(survivors(Persistence::kAofAlways),
            (Survivors{{"a", "v2"}, {"b", "v"}, {"c", "v"}, {"lease", "l"}}));
}

TEST(RedisPersistence, AofEverysecLosesWritesAfterTheLastFsync) {
  // The last fsync was at 3 000 ms: a=v2 kept, b (3 200) and c (3 500) lost.
  EXPECT_EQ(survivors(Persistence::kAofEverysec), (Survivors{{"a", "v2"}, {"lease", "l"}}));
}

TEST(RedisPersistence, RdbKeepsOnlyTheLastSnapshot) {
  // The last snapshot was at 2 000 ms: a is back to v1.
  EXPECT_EQ(survivors(Persistence::kRdb), (Survivors{{"a", "v1"}, {"lease", "l"}}));
}

// --- 6, 7, 8: failover -------------------------------------------------

TEST(RedisFailover, PromotesTheMostUpToDateReachableReplica) {
  Sim sim(failover_topology(), 2);
  RedisNode& master = sim.master();
  RedisNode& behind = sim.replica(1);  // first in member order: a naive pick would take it
  RedisNode& ahead = sim.replica(2);
  ReplicaGroup& group = *sim.group;

  EXPECT_EQ(sim.exec(master, ms(100), {"SET", "a", "1"}), Reply::ok());
  sim.at(ms(200), [&] { sim.net.partition({&behind.node()}, {&master.node()}); });
  EXPECT_EQ(sim.exec(master, ms(300), {"SET", "b", "1"}), Reply::ok());
  sim.run_until(ms(400));
  ASSERT_FALSE(has_key(behind, "b"));
  ASSERT_TRUE(has_key(ahead, "b"));
  ASSERT_LT(behind.applied_seq(), ahead.applied_seq());

  // Crash at 1 050; the check at 1 100 first sees it down; down_after (1 s)
  // later, at the check of 2 100, the failover happens.
  sim.at(ms(1050), [&] { master.node().crash(); });
  sim.run_until(ms(2100) - kOneNs);
  EXPECT_EQ(&group.current_master(), &master);
  EXPECT_EQ(group.failovers(), 0);

  sim.run_until(ms(2100));
  EXPECT_EQ(&group.current_master(), &ahead);
  EXPECT_EQ(ahead.role(), RedisNode::Role::kMaster);
  EXPECT_EQ(group.failovers(), 1);
  // The other replica now follows the new master...
  EXPECT_EQ(behind.role(), RedisNode::Role::kReplica);
  EXPECT_EQ(behind.master(), &ahead);
  // ...but clients are still told the old one until discovery_delay passes.
  EXPECT_EQ(&group.published_master(), &master);

  sim.run_until(ms(2600) - kOneNs);
  EXPECT_EQ(&group.published_master(), &master);
  sim.run_until(ms(2600));
  EXPECT_EQ(&group.published_master(), &ahead);

  // The full resync from the new master gave the lagging replica what it missed.
  EXPECT_EQ(behind.server().keys(), ahead.server().keys());
  EXPECT_TRUE(has_key(behind, "b"));
  sim.run_until(ms(5000));
  EXPECT_EQ(group.failovers(), 1);
}

TEST(RedisFailover, LastFailoverWinsAWriteOnTheResumedOldMasterIsLost) {
  Sim sim(failover_topology(), 1);
  RedisNode& old_master = sim.master();
  RedisNode& replica = sim.replica(1);
  ReplicaGroup& group = *sim.group;

  EXPECT_EQ(sim.exec(old_master, ms(100), {"SET", "k", "old"}), Reply::ok());
  // A 2 s GC pause: down from the check at 1 100, failed over at 2 100.
  sim.at(ms(1050), [&] { old_master.node().pause(); });
  sim.run_until(ms(2100));
  ASSERT_EQ(&group.current_master(), &replica);
  EXPECT_EQ(sim.exec(replica, ms(2200), {"SET", "k", "new"}), Reply::ok());

  // It resumes at 3 050 still believing it is master, and a stale client's
  // write lands before the sentinel's next check (3 100).
  Reply stale = Reply::nil();
  sim.at(ms(3050), [&] {
    old_master.node().resume();
    stale = old_master.execute({"SET", "stale", "1"});
  });
  sim.run_until(ms(3100) - kOneNs);
  EXPECT_EQ(stale, Reply::ok());
  EXPECT_EQ(old_master.role(), RedisNode::Role::kMaster);
  EXPECT_TRUE(has_key(old_master, "stale"));

  sim.run_until(ms(3100));
  EXPECT_EQ(old_master.role(), RedisNode::Role::kReplica);
  EXPECT_EQ(old_master.master(), &replica);

  // The full resync replaces its keyspace with the new master's: the
  // acknowledged write is gone, and the new master never saw it.
  sim.run_until(ms(3110));
  EXPECT_FALSE(has_key(old_master, "stale"));
  EXPECT_FALSE(has_key(replica, "stale"));
  EXPECT_EQ(old_master.server().keys(), replica.server().keys());
  EXPECT_EQ(sim.exec(old_master, ms(3110), {"GET", "k"}), Reply::bulk("new"));
  EXPECT_EQ(group.failovers(), 1);  // a demotion is not a failover
}

TEST(RedisFailover, WithoutFailoverTheCrashedMasterStaysMaster) {
  Topology topology = failover_topology();
  topology.failover = false;
  Sim sim(topology, 1);
  RedisNode& master = sim.master();
  RedisNode& replica = sim.replica(1);
  ReplicaGroup& group = *sim.group;

  EXPECT_EQ(sim.exec(master, ms(100), {"SET", "k", "v"}), Reply::ok());
  sim.at(ms(500), [&] { master.node().crash(); });
  sim.run_until(ms(10'000));
  EXPECT_EQ(&group.current_master(), &master);
  EXPECT_EQ(&group.published_master(), &master);
  EXPECT_EQ(group.failovers(), 0);
  EXPECT_EQ(replica.role(), RedisNode::Role::kReplica);
  EXPECT_TRUE(has_key(replica, "k"));

  sim.at(ms(10'000), [&] { master.node().restart(); });
  sim.run_until(ms(10'000));
  EXPECT_EQ(master.role(), RedisNode::Role::kMaster);
  // Persistence none: it came back empty, and its replica follows it there
  // (the classic way an unpersisted restart wipes a whole group).
  sim.run_until(ms(10'010));
  EXPECT_FALSE(has_key(replica, "k"));
  EXPECT_EQ(sim.exec(master, ms(10'100), {"SET", "k2", "v"}), Reply::ok());
  sim.run_until(ms(10'110));
  EXPECT_TRUE(has_key(replica, "k2"));
  EXPECT_EQ(&group.current_master(), &master);
}

// --- GroupConnection ---------------------------------------------------

TEST(GroupConnection, FollowsThePublishedMasterAndIsRefusedByACrashedOne) {
  Topology topology = failover_topology();
  topology.timeout = Duration::millis(200);
  Sim sim(topology, 1, {}, 1, LinkParams{Duration::millis(1), Duration::zero(), 0.0});
  RedisNode& master = sim.master();
  RedisNode& replica = sim.replica(1);
  GroupConnection conn(sim.world, sim.net, sim.client, *sim.group, topology.timeout);

  struct Sent {
    TimePoint at;
    Duration took;
    Reply reply;
  };
  std::vector<Sent> log;
  sim.world.spawn("c1", &sim.client, [&] {
    for (const auto& [when, value] : std::vector<std::pair<int64_t, std::string>>{
             {500, "a"}, {1200, "b"}, {2300, "c"}, {2700, "d"}}) {
      sim.world.sleep(ms(when) - sim.world.now());
      const TimePoint start = sim.world.now();
      Reply r = conn.command({"SET", "k", value});
      log.push_back({start, sim.world.now() - start, std::move(r)});
    }
  });
  // Crash at 1 000: failover at the 2 100 check, published at 2 600.
  sim.at(ms(1000), [&] { master.node().crash(); });
  sim.run_until(ms(3000));
  ASSERT_TRUE(sim.world.errors().empty());
  ASSERT_EQ(log.size(), 4u);

  // 500: the client connects (SYN, SYN-ACK: 1 ms each way), then the
  // published master answers (1 ms each way).
  EXPECT_EQ(log[0].reply, Reply::ok());
  EXPECT_EQ(log[0].took, Duration::millis(4));
  // 1 200: the master's process crashed at 1 000, which reset the
  // connection; the reconnect is refused after one round trip.
  EXPECT_EQ(log[1].reply, Reply::io_error("connect: connection refused"));
  EXPECT_EQ(log[1].took, Duration::millis(2));
  // 2 300: already failed over, but the client has not been told yet.
  EXPECT_EQ(&sim.group->current_master(), &replica);
  EXPECT_EQ(log[2].reply, Reply::io_error("connect: connection refused"));
  // 2 700: published; the command reaches the new master.
  EXPECT_EQ(log[3].reply, Reply::ok());
  EXPECT_EQ(sim.exec(replica, ms(3000), {"GET", "k"}), Reply::bulk("d"));

  // Every command went to exactly the node published at the time: the
  // master ran only the first (the dead node refused the others).
  EXPECT_EQ(master.commands_executed(), 1u);
  EXPECT_EQ(replica.commands_executed(), 2u);  // "d" and the GET above
}

// --- 9: determinism -----------------------------------------------------

struct Outcome {
  std::vector<Keys> keyspaces;
  std::vector<uint64_t> applied_seqs;
  std::vector<std::string> replies;
  int failovers = 0;
  uint64_t messages_sent = 0;
};

// Two clients contend for a lock through GroupConnection over a jittery
// network while a replica is partitioned, the master crashes and comes back,
// and a failover happens: everything a seed must reproduce.
Outcome chaotic_run(uint64_t seed) {
  Topology topology = failover_topology();
  topology.persistence = Persistence::kAofEverysec;
  topology.timeout = Duration::millis(200);
  Sim sim(topology, 2, {Duration::millis(300), -Duration::millis(200)}, seed, LinkParams{});
  Node other_client(sim.world, "c2");
  GroupConnection conn1(sim.world, sim.net, sim.client, *sim.group, topology.timeout);
  GroupConnection conn2(sim.world, sim.net, other_client, *sim.group, topology.timeout);

  Outcome out;
  auto client = [&](GroupConnection& conn, const std::string& me, Duration think) {
    return [&, me, think] {
      while (sim.world.now() < ms(6000)) {
        Reply r = conn.command({"SET", "lock", me, "NX", "PX", "300"});
        out.replies.push_back(me + " acquire " + r.to_string());
        if (r.is_ok()) {
          r = conn.command({"EVAL",
                            "if redis.call('GET', KEYS[1]) == ARGV[1] then return "
                            "redis.call('DEL', KEYS[1]) else return 0 end",
                            "1", "lock", me});
          out.replies.push_back(me + " release " + r.to_string());
        }
        sim.world.sleep(think);
      }
    };
  };
  sim.world.spawn("c1", &sim.client, client(conn1, "c1", Duration::millis(37)));
  sim.world.spawn("c2", &other_client, client(conn2, "c2", Duration::millis(23)));

  RedisNode& master = sim.master();
  sim.at(ms(500), [&] { sim.net.partition({&sim.replica(1).node()}, {&master.node()}); });
  sim.at(ms(1500), [&] { sim.net.heal(); });
  sim.at(ms(2000), [&] { master.node().crash(); });
  sim.at(ms(4000), [&] { master.node().restart(); });
  sim.run_until(ms(7000));
  EXPECT_TRUE(sim.world.errors().empty());

  for (size_t i = 0; i < sim.size(); ++i) {
    RedisNode& n = i == 0 ? sim.master() : sim.replica(i);
    out.keyspaces.push_back(n.server().keys());
    out.applied_seqs.push_back(n.applied_seq());
  }
  out.failovers = sim.group->failovers();
  out.messages_sent = sim.net.sent();
  sim.world.shutdown();  // before the connections and c2 go out of scope
  return out;
}

TEST(RedisTopology, SameSeedSameRunExactly) {
  const Outcome first = chaotic_run(7);
  const Outcome second = chaotic_run(7);
  // Not a vacuous comparison: the run did fail over and the clients did work.
  EXPECT_EQ(first.failovers, 1);
  EXPECT_GT(first.replies.size(), 50u);

  EXPECT_EQ(first.keyspaces, second.keyspaces);
  EXPECT_EQ(first.applied_seqs, second.applied_seqs);
  EXPECT_EQ(first.replies, second.replies);
  EXPECT_EQ(first.failovers, second.failovers);
  EXPECT_EQ(first.messages_sent, second.messages_sent);
}
}  // namespace
}  // namespace locksim::sim::redis
