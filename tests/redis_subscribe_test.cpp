// Pub/sub over connections: SUBSCRIBE and UNSUBSCRIBE answered and messages
// delivered as redis-server does them (the differential test), and the
// simulated subscriber connection (sim/redis/subscriber_connection.h): a
// message travels on its connection (late behind a cut link), is lost with
// a connection that breaks, and the subscriber resubscribes after.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "live/hiredis_connection.h"
#include "live/redis_process.h"
#include "sim/redis/subscriber_connection.h"
#include "sim/rpc.h"
#include "tests/redis_topology_sim.h"

namespace locksim::sim::redis {
namespace {

// One step: on the subscriber's connection ("sub": SUBSCRIBE or
// UNSUBSCRIBE) or a command on a second connection ("pub").
struct Step {
  bool sub = false;
  Argv argv;
};

const std::vector<Step>& steps() {
  static const std::vector<Step> s = {
      {true, {"SUBSCRIBE", "ch1"}},
      {true, {"SUBSCRIBE", "ch2"}},
      {true, {"SUBSCRIBE", "ch1"}},  // again: the count stays
      {false, {"PUBLISH", "ch1", "hello"}},
      {false, {"EVAL", "return redis.call('publish', KEYS[1], ARGV[1])", "1", "ch2", "scripted"}},
      {false, {"PUBLISH", "nobody", "x"}},
      {true, {"UNSUBSCRIBE", "ch1"}},
      {false, {"PUBLISH", "ch1", "unheard"}},
      {true, {"UNSUBSCRIBE", "never"}},
      {false, {"PUBLISH", "ch2", "last"}},
  };
  return s;
}

// What both sides saw: the publisher's replies, and everything pushed on the
// subscriber's connection (confirmations and messages) in arrival order;
// then, after the subscriber's connection closed, PUBLISH's count.
struct Seen {
  std::vector<Reply> replies;
  std::vector<Reply> pushed;
  Reply after_close;
};

Reply from_hiredis(const redisReply* r) {
  if (r->type == REDIS_REPLY_INTEGER) return Reply::integer_reply(r->integer);
  if (r->type != REDIS_REPLY_ARRAY) return Reply::bulk(std::string(r->str, r->len));
  std::vector<Reply> elements;
  for (size_t i = 0; i < r->elements; ++i) elements.push_back(from_hiredis(r->element[i]));
  return Reply::array(std::move(elements));
}

bool is_confirmation(const Reply& r) {
  return r.kind == Reply::Kind::kArray && !r.elements.empty() && r.elements[0].text != "message";
}

Seen on_real_server(int port) {
  Seen seen;
  live::HiredisConnection pub("127.0.0.1", port, Duration::seconds(5));
  redisContext* sub = redisConnect("127.0.0.1", port);
  EXPECT_TRUE(sub != nullptr && sub->err == 0);
  const timeval tv{5, 0};
  redisSetTimeout(sub, tv);
  for (const Step& step : steps()) {
    if (!step.sub) {
      seen.replies.push_back(pub.command(step.argv));
      continue;
    }
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (const std::string& a : step.argv) {
      argv.push_back(a.data());
      lengths.push_back(a.size());
    }
    redisAppendCommandArgv(sub, static_cast<int>(argv.size()), argv.data(), lengths.data());
    while (true) {  // messages may come first; the step's confirmation ends it
      void* raw = nullptr;
      if (redisGetReply(sub, &raw) != REDIS_OK || raw == nullptr) {
        ADD_FAILURE() << "no answer to " << step.argv[0];
        return seen;
      }
      seen.pushed.push_back(from_hiredis(static_cast<redisReply*>(raw)));
      freeReplyObject(raw);
      if (is_confirmation(seen.pushed.back())) break;
    }
  }
  // What arrived after the last step (the last PUBLISH's message).
  const timeval short_wait{0, 300'000};
  redisSetTimeout(sub, short_wait);
  void* raw = nullptr;
  while (redisGetReply(sub, &raw) == REDIS_OK && raw != nullptr) {
    seen.pushed.push_back(from_hiredis(static_cast<redisReply*>(raw)));
    freeReplyObject(raw);
    raw = nullptr;
  }
  redisFree(sub);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the server reads the close
  seen.after_close = pub.command({"PUBLISH", "ch2", "after"});
  return seen;
}

Seen in_simulation() {
  Seen seen;
  Sim sim(Topology{}, 0, {}, 1, LinkParams{Duration::millis(1), Duration::zero(), 0});
  RedisNode& node = sim.master();
  GroupConnection pub(sim.world, sim.net, sim.client, *sim.group, Duration::seconds(5));
  sim.world.spawn("c1", &sim.client, [&] {
    std::string error;
    std::unique_ptr<Connection> sub =
        dial(sim.world, sim.net, sim.client, node.node(), Duration::seconds(5), error);
    ASSERT_NE(sub, nullptr) << error;
    const uint64_t id = sub->id();
    const RedisNode::Inbox inbox = [&](const std::string& channel, const std::string& message) {
      seen.pushed.push_back(
          Reply::array({Reply::bulk("message"), Reply::bulk(channel), Reply::bulk(message)}));
    };
    for (const Step& step : steps()) {
      if (!step.sub) {
        seen.replies.push_back(pub.command(step.argv));
        continue;
      }
      const Argv argv = step.argv;
      CallResult<Reply> r = call<Reply>(
          sim.world, *sub,
          [&node, id, argv, inbox] {
            return argv[0] == "SUBSCRIBE" ? node.subscribe(id, argv[1], inbox)
                                          : node.unsubscribe(id, argv[1]);
          },
          Duration::seconds(5));
      ASSERT_EQ(r.outcome, CallOutcome::kReply);
      seen.pushed.push_back(*r.reply);
    }
    sub->close();
    sim.world.sleep(Duration::millis(10));
    seen.after_close = pub.command({"PUBLISH", "ch2", "after"});
  });
  sim.run_until(ms(5000));
  EXPECT_TRUE(sim.world.errors().empty());
  sim.world.shutdown();  // before the connections go
  return seen;
}

TEST(RedisSubscribeDifferential, RepliesAndDeliveryMatchRedisServer) {
  std::unique_ptr<live::RedisProcess> server;
  try {
    server = live::RedisProcess::start();
  } catch (const std::exception& e) {
    FAIL() << "the differential test needs redis-server 7.0 on $PATH: " << e.what();
  }
  const Seen real = on_real_server(server->port());
  const Seen sim = in_simulation();
  EXPECT_EQ(sim.replies, real.replies);
  EXPECT_EQ(sim.pushed, real.pushed);
  EXPECT_EQ(sim.after_close, real.after_close);
  // Not vacuous: the script's message arrived, the one after UNSUBSCRIBE did
  // not, and nothing reached a closed connection.
  ASSERT_EQ(real.pushed.size(), 8u);
  EXPECT_EQ(real.pushed[4],
            Reply::array({Reply::bulk("message"), Reply::bulk("ch2"), Reply::bulk("scripted")}));
  EXPECT_EQ(real.after_close, Reply::integer_reply(0));
}

// --- the simulated subscriber connection -----------------------------------

// A subscriber on c1 and a publisher on a second client node, 1 ms links.
struct SubscriberSim {
  SubscriberSim()
      : sim(Topology{}, 0, {}, 1, LinkParams{Duration::millis(1), Duration::zero(), 0}),
        publisher_node(sim.world, "c2") {}
  ~SubscriberSim() { sim.world.shutdown(); }

  // PUBLISH at `t` from c2, straight at the node (as a request arriving).
  void publish_at(TimePoint t, const std::string& message) {
    sim.at(t, [this, message] { sim.master().execute({"PUBLISH", "ch", message}); });
  }

  Sim sim;
  Node publisher_node;
  GroupSubscriber sub{sim.world, sim.net, sim.client, *sim.group, Duration::seconds(2)};
};

struct Got {
  std::optional<std::string> message;
  TimePoint at;
};

TEST(GroupSubscriber, AMessageArrivesOneLatencyAfterItsPublish) {
  SubscriberSim s;
  std::vector<Got> got;
  s.sim.world.spawn("c1", &s.sim.client, [&] {
    ASSERT_TRUE(s.sub.subscribe("ch"));
    got.push_back({s.sub.wait_message("ch", Duration::seconds(10)), s.sim.world.now()});
    got.push_back({s.sub.wait_message("ch", Duration::millis(500)), s.sim.world.now()});
  });
  s.publish_at(ms(1000), "released");
  s.sim.run_until(ms(5000));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].message, "released");
  EXPECT_EQ(got[0].at, ms(1001));
  EXPECT_EQ(got[1].message, std::nullopt);
  EXPECT_EQ(got[1].at, ms(1501)) << "a wait without a message lasts its timeout";
}

// A cut link holds the message (TCP never loses a byte on a live
// connection): it arrives after the heal, with the retransmission.
TEST(GroupSubscriber, AShortCutDelaysTheMessage) {
  SubscriberSim s;
  std::vector<Got> got;
  s.sim.world.spawn("c1", &s.sim.client, [&] {
    ASSERT_TRUE(s.sub.subscribe("ch"));
    got.push_back({s.sub.wait_message("ch", Duration::seconds(20)), s.sim.world.now()});
  });
  s.sim.at(ms(900), [&] { s.sim.net.partition({&s.sim.client}, {&s.sim.master().node()}); });
  s.publish_at(ms(1000), "released");
  s.sim.at(ms(3000), [&] { s.sim.net.heal(); });
  s.sim.run_until(ms(30'000));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].message, "released");
  EXPECT_GT(got[0].at, ms(3000));
  EXPECT_LT(got[0].at, ms(5000));
}

// A cut that outlasts the keepalive: the PING sent during it goes
// unanswered for a whole interval, the client closes the connection, the
// message held on it is lost with it, and the wait resubscribes: a message
// published after that arrives.
TEST(GroupSubscriber, ACutPastTheKeepaliveLosesTheMessageAndResubscribes) {
  SubscriberSim s;
  std::vector<Got> got;
  s.sim.world.spawn("c1", &s.sim.client, [&] {
    ASSERT_TRUE(s.sub.subscribe("ch"));  // connected at 2 ms: pings at 30 s, 60 s, ...
    got.push_back({s.sub.wait_message("ch", Duration::seconds(100)), s.sim.world.now()});
  });
  s.sim.at(ms(20'000), [&] { s.sim.net.partition({&s.sim.client}, {&s.sim.master().node()}); });
  s.publish_at(ms(25'000), "lost");
  s.sim.at(ms(61'000), [&] { s.sim.net.heal(); });
  s.publish_at(ms(80'000), "heard");
  s.sim.run_until(ms(120'000));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].message, "heard") << "the message held on the closed connection was lost";
  EXPECT_EQ(got[0].at, ms(80'001));
  EXPECT_EQ(s.sim.master().server().subscribers("ch"), 1u) << "one subscriber: the new connection";
}

// A crashed server forgets its subscribers; the subscriber sees the reset,
// reconnects once the server is back, and hears what is published after.
TEST(GroupSubscriber, AServerCrashLosesTheSubscriptionUntilTheResubscribe) {
  SubscriberSim s;
  std::vector<Got> got;
  s.sim.world.spawn("c1", &s.sim.client, [&] {
    ASSERT_TRUE(s.sub.subscribe("ch"));
    got.push_back({s.sub.wait_message("ch", Duration::seconds(20)), s.sim.world.now()});
  });
  s.sim.at(ms(1000), [&] { s.sim.master().node().crash(); });
  s.sim.at(ms(4000), [&] { s.sim.master().node().restart(); });
  s.publish_at(ms(8000), "after-restart");
  s.sim.run_until(ms(30'000));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].message, "after-restart");
  EXPECT_EQ(got[0].at, ms(8001));
}

}  // namespace
}  // namespace locksim::sim::redis
