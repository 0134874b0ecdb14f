// The network as TCP sees it (sim/connection.h, sim/network.h): FIFO per
// direction under any jitter, bytes held by a partition and delivered after
// the heal, a break past the retransmission limit, resets on a crash but not
// on a freeze, one-way partitions, loss as delay, connects that time out.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "sim/connection.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/redis/redis_node.h"
#include "sim/rpc.h"
#include "sim/stream_index.h"
#include "sim/world.h"

namespace locksim::sim {
namespace {

TimePoint at(Duration d) {
  return TimePoint{} + d;
}

TEST(Retransmission, FollowsLinuxScheduleUpToTheLimit) {
  const TcpParams p;
  const TimePoint t0 = at(Duration::seconds(10));
  // 0.2, 0.6, 1.4, 3.0 s after the first send, ...
  EXPECT_EQ(next_retransmission(t0, t0 + Duration::millis(100), p), t0 + Duration::millis(200));
  EXPECT_EQ(next_retransmission(t0, t0 + Duration::millis(700), p), t0 + Duration::millis(1400));
  // The last one leaves exactly at the limit, 924.6 s; after it, none.
  EXPECT_EQ(next_retransmission(t0, t0 + Duration::seconds(900), p),
            t0 + Duration::millis(924'600));
  EXPECT_EQ(next_retransmission(t0, t0 + Duration::millis(924'601), p), std::nullopt);
}

// Sends `n` numbered messages from a to b at seeded times, with seeded
// partitions, heals and delay spikes in between; returns what b received, in
// order of arrival.
std::vector<int> send_through_chaos(uint64_t seed, int n) {
  World w(WorldOptions{seed});
  Network net(w, Rng(seed));
  net.set_default_link(LinkParams{Duration::micros(200), Duration::millis(40), 0.2});
  Node a(w, "a"), b(w, "b");
  Rng rng(seed * 7 + 1);
  std::vector<int> got;
  for (int i = 0; i < n; ++i) {
    w.at(at(Duration::millis(rng.between(0, 20'000))),
         [&net, &a, &b, &got, i] { net.send(a, b, [&got, i] { got.push_back(i); }); });
  }
  for (int k = 0; k < 4; ++k) {
    const Duration start = Duration::millis(rng.between(0, 18'000));
    const Duration length = Duration::millis(rng.between(1, 3'000));
    if (k % 2 == 0) {
      w.at(at(start), [&] { net.partition({&a}, {&b}); });
      w.at(at(start + length), [&] { net.heal(); });
    } else {
      w.at(at(start), [&] { net.add_delay({&a}, {&b}, Duration::seconds(2)); });
      w.at(at(start + length), [&] { net.remove_delay({&a}, {&b}, Duration::seconds(2)); });
    }
  }
  w.run_until(at(Duration::seconds(200)));
  EXPECT_EQ(net.in_flight(), 0u);
  return got;
}

TEST(Stream, FifoUnderAnyJitterPartitionOrDelay) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE(seed);
    World w(WorldOptions{seed});
    Network net(w, Rng(seed));
    net.set_default_link(LinkParams{Duration::micros(200), Duration::millis(40), 0.2});
    Node a(w, "a"), b(w, "b");
    Rng rng(seed * 7 + 1);
    std::vector<int> sent, got;
    for (int i = 0; i < 100; ++i) {
      w.at(at(Duration::millis(rng.between(0, 20'000))), [&net, &a, &b, &sent, &got, i] {
        sent.push_back(i);
        net.send(a, b, [&got, i] { got.push_back(i); });
      });
    }
    for (int k = 0; k < 4; ++k) {
      const Duration start = Duration::millis(rng.between(0, 18'000));
      const Duration length = Duration::millis(rng.between(1, 3'000));
      if (k % 2 == 0) {
        w.at(at(start), [&] { net.partition({&a}, {&b}); });
        w.at(at(start + length), [&] { net.heal(); });
      } else {
        w.at(at(start), [&] { net.add_delay({&a}, {&b}, Duration::seconds(2)); });
        w.at(at(start + length), [&] { net.remove_delay({&a}, {&b}, Duration::seconds(2)); });
      }
    }
    w.run_until(at(Duration::seconds(200)));
    // Every message arrives (loss is a delay; no partition outlasts the
    // limit), exactly in the order it was sent.
    EXPECT_EQ(got, sent);
    EXPECT_EQ(net.dropped(), 0u);
    EXPECT_EQ(net.in_flight(), 0u);
  }
}

TEST(Stream, SameSeedSameArrivals) {
  EXPECT_EQ(send_through_chaos(5, 50), send_through_chaos(5, 50));
}

// A Redis master and one client on a connection without a timeout.
struct RedisFixture {
  World w{WorldOptions{}};
  Network net{w, Rng(1)};
  redis::Topology topology;
  redis::RedisNode server{w, net, "redis-1", 1, topology};
  redis::ReplicaGroup group{w, net, "redis-1", {&server}, nullptr, topology};
  Node client{w, "c1"};
  std::unique_ptr<redis::GroupConnection> conn;

  explicit RedisFixture(Duration timeout = kNoTimeout) {
    conn = std::make_unique<redis::GroupConnection>(w, net, client, group, timeout);
  }
  ~RedisFixture() {
    conn.reset();
    w.shutdown();
  }
};

TEST(Connection, BytesSentDuringAPartitionArriveAfterTheHealInOrder) {
  RedisFixture f;
  std::vector<std::pair<TimePoint, Reply>> replies;
  f.w.spawn("c1", &f.client, [&] {
    f.w.sleep(Duration::seconds(1));  // connected; the partition begins at 2 s
    f.conn->command({"PING"});
    f.w.sleep(Duration::seconds(2));
    // Pipelined by two fibers would need two connections; one after the other
    // on one connection is what a lock client does: each waits, no timeout.
    for (int i = 0; i < 2; ++i) {
      Reply r = f.conn->command({"INCR", "n"});
      replies.emplace_back(f.w.now(), r);
    }
  });
  f.w.at(at(Duration::seconds(2)), [&] { f.net.partition({&f.client}, {&f.server.node()}); });
  f.w.at(at(Duration::seconds(22)), [&] { f.net.heal(); });
  f.w.run_until(at(Duration::seconds(60)));
  ASSERT_EQ(replies.size(), 2u);
  // The first APPEND, sent at 3 s, waited out the partition: its reply came
  // with the first retransmission after the heal (3 s + 25.4 s on the
  // doubling schedule), not before.
  EXPECT_GE(replies[0].first, at(Duration::seconds(22)));
  EXPECT_LT(replies[0].first, at(Duration::seconds(30)));
  EXPECT_EQ(replies[0].second, Reply::integer_reply(1));
  EXPECT_EQ(replies[1].second, Reply::integer_reply(2));
  // The server applied both.
  EXPECT_EQ(f.server.execute({"GET", "n"}), Reply::bulk("2"));
}

TEST(Connection, APartitionPastTheRetransmissionLimitBreaksTheConnection) {
  RedisFixture f;
  std::optional<Reply> reply;
  TimePoint failed_at{};
  f.w.spawn("c1", &f.client, [&] {
    f.conn->command({"PING"});  // connects before the partition
    f.w.sleep(Duration::seconds(1));
    reply = f.conn->command({"SET", "k", "v"});
    failed_at = f.w.now();
  });
  f.w.at(at(Duration::millis(500)), [&] { f.net.partition({&f.client}, {&f.server.node()}); });
  f.w.at(at(Duration::seconds(1000)), [&] { f.net.heal(); });
  f.w.run_until(at(Duration::seconds(1100)));
  ASSERT_TRUE(reply.has_value());
  EXPECT_TRUE(reply->is_io_error());
  EXPECT_NE(reply->text.find("retransmission limit"), std::string::npos);
  // Broken 924.6 s after the SET was written, while the partition lasted.
  EXPECT_GT(failed_at, at(Duration::seconds(1)) + f.net.tcp().retransmission_limit);
  EXPECT_LT(failed_at, at(Duration::millis(1010)) + f.net.tcp().retransmission_limit);
  EXPECT_EQ(f.net.connections_broken(), 1u);
  // The held SET was lost with the connection: the server never ran it.
  EXPECT_EQ(f.server.execute({"EXISTS", "k"}), Reply::integer_reply(0));
}

TEST(Connection, ACrashResetsThePeerAtOnceAFreezeDoesNot) {
  for (const bool crash : {true, false}) {
    SCOPED_TRACE(crash ? "crash" : "pause");
    RedisFixture f;
    std::optional<Reply> reply;
    TimePoint answered_at{};
    f.w.spawn("c1", &f.client, [&] {
      f.conn->command({"PING"});
      // A slow command stands in for "waiting on the server": the server is
      // stopped before the request lands.
      f.w.sleep(Duration::seconds(1));
      reply = f.conn->command({"SET", "k", "v"});
      answered_at = f.w.now();
    });
    f.w.at(at(Duration::millis(500)), [&] {
      if (crash) {
        f.server.node().crash();
      } else {
        f.server.node().pause();
      }
    });
    f.w.at(at(Duration::seconds(2)), [&] {
      if (crash) return;
      // Pair of the wait below: the frozen server said nothing so far.
      EXPECT_FALSE(reply.has_value());
    });
    f.w.at(at(Duration::seconds(30)), [&] {
      if (!crash) f.server.node().resume();
    });
    f.w.run_until(at(Duration::seconds(40)));
    ASSERT_TRUE(reply.has_value());
    if (crash) {
      // Reset before the SET was even written: the client learns at once.
      EXPECT_TRUE(reply->is_io_error());
      EXPECT_LT(answered_at, at(Duration::millis(1100)));
      EXPECT_EQ(f.net.connections_reset(), 1u);
    } else {
      // Frozen: silence until it resumes, then the reply.
      EXPECT_TRUE(reply->is_ok());
      EXPECT_GE(answered_at, at(Duration::seconds(30)));
      EXPECT_EQ(f.net.connections_reset(), 0u);
    }
  }
}

TEST(Connection, ACrashWhileARequestWaitsResetsTheWaiter) {
  RedisFixture f;
  std::optional<Reply> reply;
  TimePoint answered_at{};
  f.w.spawn("c1", &f.client, [&] {
    f.conn->command({"PING"});
    f.server.node().pause();  // the request will sit in the server's queue
    reply = f.conn->command({"SET", "k", "v"});
    answered_at = f.w.now();
  });
  f.w.at(at(Duration::seconds(5)), [&] { f.server.node().crash(); });
  f.w.run_until(at(Duration::seconds(10)));
  ASSERT_TRUE(reply.has_value());
  EXPECT_NE(reply->text.find("reset"), std::string::npos);
  // One latency after the crash, not a timeout later (there is none).
  EXPECT_GE(answered_at, at(Duration::seconds(5)));
  EXPECT_LT(answered_at, at(Duration::seconds(5) + Duration::millis(10)));
}

TEST(Network, AOneWayPartitionDeliversOneDirectionOnly) {
  World w(WorldOptions{});
  Network net(w, Rng(1));
  Node a(w, "a"), b(w, "b");
  std::vector<std::pair<std::string, TimePoint>> got;
  net.partition_one_way({&a}, {&b});
  EXPECT_FALSE(net.can_send(a, b));
  EXPECT_TRUE(net.can_send(b, a));
  EXPECT_FALSE(net.connected(a, b));
  net.send(a, b, [&] { got.emplace_back("a->b", w.now()); });
  net.send(b, a, [&] { got.emplace_back("b->a", w.now()); });
  w.at(at(Duration::seconds(10)), [&] { net.heal(); });
  w.run_until(at(Duration::seconds(60)));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].first, "b->a");
  EXPECT_LT(got[0].second, at(Duration::millis(100)));
  EXPECT_EQ(got[1].first, "a->b");  // held, then delivered after the heal
  EXPECT_GE(got[1].second, at(Duration::seconds(10)));
}

TEST(Network, LossIsARetransmissionDelayNeverALoss) {
  World w(WorldOptions{});
  Network net(w, Rng(3));
  net.set_default_link(LinkParams{Duration::micros(200), Duration::zero(), 0.5});
  Node a(w, "a"), b(w, "b");
  std::vector<int> got;
  int late = 0;
  for (int i = 0; i < 200; ++i) {
    w.at(at(Duration::seconds(i)), [&, i] {
      const TimePoint sent = w.now();
      net.send(a, b, [&, i, sent] {
        got.push_back(i);
        // A loss costs at least one RTO (200 ms).
        if (w.now() - sent >= Duration::millis(200)) ++late;
      });
    });
  }
  w.run_until(at(Duration::seconds(1000)));
  ASSERT_EQ(got.size(), 200u);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], i);
  EXPECT_GT(late, 60);  // about half
  EXPECT_LT(late, 140);
}

TEST(Connection, AConnectDuringAPartitionFailsAfterTheConnectTimeout) {
  RedisFixture f(Duration::seconds(2));
  std::optional<Reply> reply;
  TimePoint failed_at{};
  f.net.partition({&f.client}, {&f.server.node()});
  f.w.spawn("c1", &f.client, [&] {
    reply = f.conn->command({"PING"});
    failed_at = f.w.now();
  });
  f.w.run_until(at(Duration::seconds(10)));
  ASSERT_TRUE(reply.has_value());
  EXPECT_NE(reply->text.find("connect: timeout"), std::string::npos);
  EXPECT_EQ(failed_at, at(Duration::seconds(2)));
}

TEST(Connection, AClientThatGivesUpDoesNotRecallWhatItSent) {
  RedisFixture f(Duration::seconds(1));
  std::optional<Reply> first, later;
  f.w.spawn("c1", &f.client, [&] {
    f.conn->command({"PING"});
    f.net.partition({&f.client}, {&f.server.node()});
    first = f.conn->command({"SET", "k", "late"});  // times out; connection closed
    f.w.sleep(Duration::seconds(30));               // healed at 20 s
    later = f.conn->command({"GET", "k"});          // a new connection
  });
  f.w.at(at(Duration::seconds(20)), [&] { f.net.heal(); });
  f.w.run_until(at(Duration::seconds(60)));
  ASSERT_TRUE(first.has_value() && later.has_value());
  EXPECT_TRUE(first->is_io_error());
  // The server ran the SET after the heal, though its client had given up.
  EXPECT_EQ(*later, Reply::bulk("late"));
}

// The Network's stream lookup (sim/stream_index.h) against a plain map: every
// key put in is found with its stream, through several growths; a key that
// differs in any one field is not; node addresses packed close together (as
// a run's nodes are) all stay apart.
TEST(StreamIndex, FindsWhatWasPutInAndNothingElse) {
  World w(WorldOptions{1});
  std::vector<std::unique_ptr<Node>> nodes;
  for (int i = 0; i < 12; ++i) nodes.push_back(std::make_unique<Node>(w, "n" + std::to_string(i)));
  // Distinct non-null Stream pointers without making streams: the index only
  // keeps them.
  std::vector<char> tags(1'000);
  StreamIndex index;
  std::map<std::tuple<const Node*, const Node*, uint64_t>, Stream*> reference;
  size_t next_tag = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (size_t j = 0; j < nodes.size(); ++j) {
      for (uint64_t connection : {0ULL, 1ULL, 7ULL}) {
        if (i == j || (connection == 7 && i < j)) continue;
        Stream* s = reinterpret_cast<Stream*>(&tags[next_tag++]);
        index.insert({nodes[i].get(), nodes[j].get(), connection}, s);
        reference[{nodes[i].get(), nodes[j].get(), connection}] = s;
      }
    }
  }
  ASSERT_EQ(index.size(), reference.size());
  ASSERT_GT(index.size(), 256u);  // grew from 16 slots several times
  for (const auto& [key, stream] : reference) {
    const auto& [from, to, connection] = key;
    EXPECT_EQ(index.find({from, to, connection}), stream);
    EXPECT_EQ(index.find({from, to, connection + 100}), nullptr);
  }
  for (const auto& n : nodes) EXPECT_EQ(index.find({n.get(), n.get(), 0}), nullptr);
  EXPECT_EQ(StreamIndex().find({nodes[0].get(), nodes[1].get(), 0}), nullptr);
}

}  // namespace
}  // namespace locksim::sim
