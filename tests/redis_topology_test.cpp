// The simulated Redis deployment (sim/redis/redis_node.*): asynchronous
// replication with lag, expiry as absolute time on the master's clock,
// read-only replicas and persistence across crash-restart (failover and
// clients that follow the published master: redis_failover_test.cpp). These
// are the failure modes lock algorithms are judged against, so each test pins
// one of them to exact virtual times.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>

#include "sim/redis/redis_node.h"
#include "sim/redis/server.h"
#include "sim/redis/topology.h"
#include "tests/redis_topology_sim.h"

namespace locksim::sim::redis {
namespace {

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

// A shipment held by a partition is late, not lost: TCP retransmits it and
// it lands after the heal (and the group's resync check covers a link that
// broke); the replica catches up without waiting for another write.
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
  // Healed at 1 000: the held shipment leaves with the next retransmission
  // (RTO 200 ms doubling from its first send: 1 600 at the latest).
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
  EXPECT_EQ(&sim.group->current_primary(), &replica);

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

}  // namespace
}  // namespace locksim::sim::redis
