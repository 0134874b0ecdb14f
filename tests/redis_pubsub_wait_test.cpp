// PUBLISH and WAIT in the simulated Redis: the subscription registry's
// counts (sim/redis/server.h), PUBLISH propagated from a master to its
// replicas, and WAIT against the simulated replication (redis_node_wait.cpp):
// a replica that has acknowledged counts, one cut off or lagging does not
// until its acknowledgement arrives. Each test pins exact virtual times on
// the zero-jitter links of redis_topology_sim.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/redis/redis_node.h"
#include "sim/redis/server.h"
#include "sim/redis/topology.h"
#include "tests/redis_topology_sim.h"

namespace locksim::sim::redis {
namespace {

// --- PUBLISH ---------------------------------------------------------------

TEST(RedisPublish, CountsTheSubscribersRegisteredThroughTheApi) {
  Server server(1);
  const TimePoint now = ms(1000);
  std::vector<Server::Publication> seen;
  server.set_publication_sink([&](const Server::Publication& p) { seen.push_back(p); });

  EXPECT_EQ(server.execute({"PUBLISH", "ch", "m0"}, now), Reply::integer_reply(0));
  EXPECT_TRUE(server.subscribe(2, "ch"));
  EXPECT_TRUE(server.subscribe(1, "ch"));
  EXPECT_FALSE(server.subscribe(1, "ch")) << "subscribed twice";
  EXPECT_TRUE(server.subscribe(1, "other"));
  EXPECT_EQ(server.subscribers("ch"), 2u);
  EXPECT_EQ(server.execute({"publish", "ch", "m1"}, now), Reply::integer_reply(2));
  EXPECT_EQ(server.execute({"PUBLISH", "nobody", "m2"}, now), Reply::integer_reply(0));
  // From a script, as Redisson's unlock publishes.
  EXPECT_EQ(server.execute(
                {"EVAL", "return redis.call('publish', KEYS[1], ARGV[1])", "1", "ch", "m3"}, now),
            Reply::integer_reply(2));

  EXPECT_TRUE(server.unsubscribe(2, "ch"));
  EXPECT_FALSE(server.unsubscribe(2, "ch"));
  EXPECT_EQ(server.execute({"PUBLISH", "ch", "m4"}, now), Reply::integer_reply(1));
  EXPECT_EQ(server.unsubscribe_all(1), 2u);
  EXPECT_EQ(server.subscribers("ch"), 0u);
  EXPECT_EQ(server.execute({"PUBLISH", "ch", "m5"}, now), Reply::integer_reply(0));

  // Every message reached the sink, with its receivers in subscriber order.
  ASSERT_EQ(seen.size(), 6u);
  EXPECT_EQ(seen[1].message, "m1");
  EXPECT_EQ(seen[1].receivers, (std::vector<Server::SubscriberId>{1, 2}));
  EXPECT_EQ(seen[3].channel, "ch");
  EXPECT_EQ(seen[3].message, "m3");
  EXPECT_EQ(seen[4].receivers, (std::vector<Server::SubscriberId>{1}));
  EXPECT_TRUE(seen[5].receivers.empty());

  // A restart closes every connection: no subscriber survives it.
  server.subscribe(9, "ch");
  server.flush_all();
  EXPECT_EQ(server.execute({"PUBLISH", "ch", "m6"}, now), Reply::integer_reply(0));
}

// Redis propagates PUBLISH to replicas, whose own subscribers get it; the
// message rides the replication stream, so it arrives with the lag and
// after the keyspace change the same script made.
TEST(RedisPublish, AMastersPublishReachesTheReplicasSubscribersAfterTheWrite) {
  Topology topology;
  topology.replication_lag = Duration::millis(10);
  Sim sim(topology, 1);
  RedisNode& master = sim.master();
  RedisNode& replica = sim.replica(1);
  replica.server().subscribe(7, "ch");
  struct Seen {
    TimePoint at;
    std::vector<Server::SubscriberId> receivers;
    bool list_there;
  };
  std::vector<Seen> at_replica;
  replica.on_publication = [&](const Server::Publication& p) {
    at_replica.push_back({sim.world.now(), p.receivers, has_key(replica, "queue")});
  };
  int at_master = 0;
  master.on_publication = [&](const Server::Publication&) { ++at_master; };

  const std::string script =
      "redis.call('rpush', KEYS[1], 'x') return redis.call('publish', 'ch', 'next')";
  EXPECT_EQ(sim.exec(master, ms(100), {"EVAL", script, "1", "queue"}), Reply::integer_reply(0))
      << "nobody subscribes at the master";
  sim.run_until(ms(120));
  EXPECT_EQ(at_master, 1);
  ASSERT_EQ(at_replica.size(), 1u);
  EXPECT_EQ(at_replica[0].at, ms(110));
  EXPECT_EQ(at_replica[0].receivers, (std::vector<Server::SubscriberId>{7}));
  EXPECT_TRUE(at_replica[0].list_there) << "the message overtook the write it followed";

  // A PUBLISH sent to the replica itself stays there.
  EXPECT_EQ(sim.exec(replica, ms(200), {"PUBLISH", "ch", "local"}), Reply::integer_reply(1));
  sim.run_until(ms(300));
  EXPECT_EQ(at_master, 1);
  EXPECT_EQ(at_replica.size(), 2u);
}

// --- the new types on replicas ---------------------------------------------

// Lists and sorted sets ship to replicas with the keyspace (expiry and
// all); a replica answers reads of them and refuses their writes.
TEST(RedisReplicationOfNewTypes, ListsAndSortedSetsShipAndReplicasRefuseTheirWrites) {
  Topology topology;
  topology.replication_lag = Duration::millis(10);
  Sim sim(topology, 1);
  RedisNode& master = sim.master();
  RedisNode& replica = sim.replica(1);
  EXPECT_EQ(sim.exec(master, ms(100), {"RPUSH", "q", "t1", "t2"}), Reply::integer_reply(2));
  EXPECT_EQ(sim.exec(master, ms(100), {"ZADD", "z", "1.5", "t1"}), Reply::integer_reply(1));
  EXPECT_EQ(sim.exec(master, ms(100), {"PEXPIRE", "q", "1000"}), Reply::integer_reply(1));
  sim.run_until(ms(110));
  EXPECT_EQ(replica.server().keys(), master.server().keys());
  EXPECT_EQ(sim.exec(replica, ms(120), {"LRANGE", "q", "0", "-1"}),
            Reply::array({Reply::bulk("t1"), Reply::bulk("t2")}));
  EXPECT_EQ(sim.exec(replica, ms(120), {"ZSCORE", "z", "t1"}), Reply::bulk("1.5"));
  for (const Argv& write : std::vector<Argv>{{"RPUSH", "q", "x"},
                                             {"LPOP", "q"},
                                             {"LREM", "q", "0", "t1"},
                                             {"ZADD", "z", "1", "x"},
                                             {"ZINCRBY", "z", "1", "t1"},
                                             {"ZREM", "z", "t1"},
                                             {"HSET", "h", "f", "v"}}) {
    EXPECT_EQ(sim.exec(replica, ms(130), write), Reply::error(kReadonly)) << write[0];
  }
  // Emptied on the master: the key goes there and then on the replica.
  EXPECT_EQ(sim.exec(master, ms(200), {"LPOP", "q", "5"}),
            Reply::array({Reply::bulk("t1"), Reply::bulk("t2")}));
  EXPECT_EQ(sim.exec(master, ms(200), {"ZREM", "z", "t1"}), Reply::integer_reply(1));
  sim.run_until(ms(210));
  EXPECT_TRUE(replica.server().keys().empty());
}

// --- WAIT ------------------------------------------------------------------

// One client issuing commands through GroupConnection at given times, with
// the reply and how long each took.
struct Issued {
  Reply reply;
  Duration took;
};

class RedisWait : public ::testing::Test {
 protected:
  // Two replicas, 10 ms replication lag, 1 ms links without jitter.
  RedisWait() : sim_(topology(), 2, {}, 1, LinkParams{Duration::millis(1), Duration::zero(), 0}) {}
  ~RedisWait() override { sim_.world.shutdown(); }

  static Topology topology() {
    Topology t;
    t.replication_lag = Duration::millis(10);
    t.timeout = Duration::seconds(30);
    return t;
  }

  // Runs `commands` one after another from t = `start`, until `end`.
  std::vector<Issued> run(TimePoint start, std::vector<Argv> commands, TimePoint end) {
    std::vector<Issued> log;
    sim_.world.spawn("c1", &sim_.client, [&] {
      sim_.world.sleep(start - sim_.world.now());
      for (const Argv& argv : commands) {
        const TimePoint sent = sim_.world.now();
        Reply r = conn_.command(argv);
        log.push_back({std::move(r), sim_.world.now() - sent});
      }
    });
    sim_.run_until(end);
    EXPECT_TRUE(sim_.world.errors().empty());
    return log;
  }

  Sim sim_;
  GroupConnection conn_{sim_.world, sim_.net, sim_.client, *sim_.group, Duration::seconds(30)};
};

TEST_F(RedisWait, CountsReplicasThatAcknowledgedTheClientsLastWrite) {
  const auto log = run(ms(100),
                       {{"SET", "k", "v"},
                        {"WAIT", "2", "1000"},
                        {"WAIT", "2", "1000"},
                        {"WAIT", "0", "0"},
                        {"wait", "1", "0"}},
                       ms(2000));
  ASSERT_EQ(log.size(), 5u);
  EXPECT_EQ(log[0].reply, Reply::ok());
  // Blocked: GETACK leaves with the write's shipment, the replication lag
  // after the write (10 ms), behind it on the 1 ms link; the ack comes back
  // (1 ms) and the reply goes out (1 ms); 1 ms for the request.
  EXPECT_EQ(log[1].reply, Reply::integer_reply(2));
  EXPECT_EQ(log[1].took, Duration::millis(14));
  // Already acknowledged: answered at once (one round trip).
  EXPECT_EQ(log[2].reply, Reply::integer_reply(2));
  EXPECT_EQ(log[2].took, Duration::millis(2));
  EXPECT_EQ(log[3].reply, Reply::integer_reply(2));
  EXPECT_EQ(log[4].reply, Reply::integer_reply(2));
  EXPECT_EQ(sim_.master().replica_acks().size(), 2u);
  EXPECT_EQ(sim_.master().blocked_waits(), 0u);
}

TEST_F(RedisWait, APartitionedReplicaDoesNotCountUntilItAcknowledges) {
  RedisNode& cut = sim_.replica(2);
  sim_.at(ms(50), [&] { sim_.net.partition({&cut.node()}, {&sim_.master().node()}); });
  sim_.at(ms(1500), [&] { sim_.net.heal(); });
  const auto log = run(ms(100),
                       {{"SET", "k", "v"},
                        {"WAIT", "1", "300"},
                        {"WAIT", "2", "300"},
                        {"WAIT", "2", "0"}},  // "forever": until the heal lets the ack through
                       ms(5000));
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[1].reply, Reply::integer_reply(1));
  EXPECT_EQ(log[1].took, Duration::millis(14));
  // Only one replica acknowledges: the full timeout, then the count.
  EXPECT_EQ(log[2].reply, Reply::integer_reply(1));
  EXPECT_EQ(log[2].took, Duration::millis(302));
  // Timeout 0 blocks through the partition; after the heal the held
  // shipment and GETACK arrive (TCP retransmission) and the ack counts.
  EXPECT_EQ(log[3].reply, Reply::integer_reply(2));
  const TimePoint answered = ms(100) + log[0].took + log[1].took + log[2].took + log[3].took;
  EXPECT_GT(answered, ms(1500));
  EXPECT_LT(answered, ms(1500) + Duration::seconds(2));
  EXPECT_EQ(cut.server().keys(), sim_.master().server().keys());
}

// A lagging replica (a slow link) counts only once its ack arrives: a WAIT
// shorter than the lag gets 1, a longer one 2.
TEST_F(RedisWait, ALaggingReplicaCountsOnceItsAckArrives) {
  RedisNode& slow = sim_.replica(2);
  sim_.at(ms(50), [&] {
    sim_.net.add_delay({&slow.node()}, {&sim_.master().node()}, Duration::millis(200));
  });
  const auto log = run(
      ms(100), {{"SET", "k", "v"}, {"WAIT", "2", "100"}, {"SET", "k", "w"}, {"WAIT", "2", "1000"}},
      ms(3000));
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[1].reply, Reply::integer_reply(1));
  EXPECT_EQ(log[1].took, Duration::millis(102));
  EXPECT_EQ(log[3].reply, Reply::integer_reply(2));
  // The shipment and GETACK take 201 ms to the slow replica, its ack 201 ms back.
  EXPECT_GT(log[3].took, Duration::millis(400));
  EXPECT_LT(log[3].took, Duration::millis(1000));
}

// A replica whose process dies is gone from its master at once (its link's
// RST): its earlier ack no longer counts.
TEST_F(RedisWait, ACrashedReplicasAckIsForgotten) {
  sim_.at(ms(500), [&] { sim_.replica(2).node().crash(); });
  const auto log =
      run(ms(100), {{"SET", "k", "v"}, {"WAIT", "2", "100"}, {"SET", "k", "w"}}, ms(600));
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[1].reply, Reply::integer_reply(2));
  EXPECT_EQ(sim_.master().replica_acks().count("redis-1-r2"), 0u);
  EXPECT_EQ(sim_.exec(sim_.master(), ms(700), {"WAIT", "2", "100"}), Reply::integer_reply(1))
      << "a direct call never blocks: the count as it stands";
}

TEST_F(RedisWait, ErrorsOnAReplicaFromAScriptAndForBadArguments) {
  RedisNode& replica = sim_.replica(1);
  EXPECT_EQ(sim_.exec(replica, ms(10), {"WAIT", "0", "0"})
                .text.rfind("ERR WAIT cannot be used with replica instances.", 0),
            0u);
  EXPECT_EQ(sim_.exec(replica, ms(10), {"WAIT", "0"}),
            Reply::error("ERR wrong number of arguments for 'wait' command"));
  RedisNode& master = sim_.master();
  EXPECT_EQ(sim_.exec(master, ms(20), {"WAIT", "x", "0"}),
            Reply::error("ERR value is not an integer or out of range"));
  EXPECT_EQ(sim_.exec(master, ms(20), {"WAIT", "1", "-1"}),
            Reply::error("ERR timeout is negative"));
  EXPECT_EQ(sim_.exec(master, ms(20), {"EVAL", "return redis.call('wait', 0, 0)", "0"})
                .text.rfind("ERR This Redis command is not allowed from script", 0),
            0u);
  // Through a connection, the errors come back at once too.
  const auto log = run(ms(100), {{"WAIT", "1", "abc"}, {"WAIT", "0", "0"}}, ms(200));
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].reply, Reply::error("ERR timeout is not an integer or out of range"));
  EXPECT_EQ(log[1].reply, Reply::integer_reply(0)) << "no replica has acknowledged yet";
}

// WAIT and PUBLISH on a jittery network with a partition and a replica
// crash: the same seed gives the same replies at the same instants.
std::vector<std::string> jittery_wait_run(uint64_t seed) {
  Topology topology;
  topology.replication_lag = Duration::millis(5);
  Sim sim(topology, 2, {}, seed, LinkParams{});
  GroupConnection conn(sim.world, sim.net, sim.client, *sim.group, Duration::seconds(2));
  sim.replica(1).server().subscribe(1, "ch");
  std::vector<std::string> log;
  sim.replica(1).on_publication = [&](const Server::Publication& p) {
    log.push_back(std::to_string(sim.world.now().to_ms()) + " replayed " + p.message);
  };
  sim.world.spawn("c1", &sim.client, [&] {
    for (int i = 0; sim.world.now() < ms(4000); ++i) {
      const std::string n = std::to_string(i);
      for (const Argv& argv : std::vector<Argv>{{"ZADD", "z", n, "m" + n},
                                                {"PUBLISH", "ch", n},
                                                {"WAIT", "2", std::to_string(50 * (i % 4))}}) {
        const Reply r = conn.command(argv);
        log.push_back(std::to_string(sim.world.now().ns) + " " + argv[0] + " " + r.to_string());
      }
      sim.world.sleep(Duration::millis(37));
    }
  });
  sim.at(ms(500), [&] { sim.net.partition({&sim.replica(2).node()}, {&sim.master().node()}); });
  sim.at(ms(1500), [&] { sim.net.heal(); });
  sim.at(ms(2500), [&] { sim.replica(1).node().crash(); });
  sim.at(ms(3000), [&] { sim.replica(1).node().restart(); });
  sim.run_until(ms(5000));
  EXPECT_TRUE(sim.world.errors().empty());
  sim.world.shutdown();  // before the connection goes out of scope
  return log;
}

TEST(RedisWaitDeterminism, SameSeedSameRepliesAtTheSameInstants) {
  const std::vector<std::string> first = jittery_wait_run(7);
  EXPECT_EQ(first, jittery_wait_run(7));
  // Not vacuous: WAIT saw both full and partial counts.
  auto saw = [&](const std::string& what) {
    return std::any_of(first.begin(), first.end(),
                       [&](const std::string& line) { return line.ends_with(what); });
  };
  EXPECT_TRUE(saw("WAIT (integer) 2"));
  EXPECT_TRUE(saw("WAIT (integer) 1"));
  EXPECT_GT(first.size(), 100u);
}

}  // namespace
}  // namespace locksim::sim::redis
