#include "sim/redis/subscriber_connection.h"

#include <algorithm>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include "env/assert.h"
#include "sim/rpc.h"

namespace locksim::sim::redis {

struct GroupSubscriber::Shared {
  World* world = nullptr;
  Network* net = nullptr;
  Node* client = nullptr;
  bool alive = true;        // false once the subscriber is gone
  uint64_t connection = 0;  // the current connection's id; 0: none
  uint64_t pongs = 0;       // the last PING answered on `connection`
  // Channels held, each with its messages not taken yet (oldest first).
  std::map<std::string, std::deque<std::string>> kept;
  Waiter* waiting = nullptr;  // the wait blocked now, on `waiting_channel`
  std::string waiting_channel;
  uint64_t waits = 0;  // bumped when a wait ends: its timer then does nothing

  void wake() {
    if (waiting != nullptr) world->signal(*waiting);
  }
  // A message arrived at the client on connection `id`.
  void receive(uint64_t id, const std::string& channel, const std::string& message) {
    if (!alive || connection != id) return;  // a connection already given up
    const auto it = kept.find(channel);
    if (it == kept.end()) return;  // unsubscribed since: the library drops it
    it->second.push_back(message);
    if (it->second.size() > kKeptMax) it->second.pop_front();
    LOCKSIM_ASSERT(it->second.size() <= kKeptMax);
    if (waiting_channel == channel) wake();
  }
};

GroupSubscriber::GroupSubscriber(World& world, Network& net, Node& client, ReplicaGroup& group,
                                 Duration timeout)
    : world_(world),
      net_(net),
      client_(client),
      group_(group),
      timeout_(timeout),
      shared_(std::make_shared<Shared>()) {
  LOCKSIM_ASSERT(timeout_ > Duration::zero());
  shared_->world = &world;
  shared_->net = &net;
  shared_->client = &client;
}

GroupSubscriber::~GroupSubscriber() {
  shared_->alive = false;
  shared_->waiting = nullptr;
  // Only the handle: the network may be gone already at teardown, and the
  // Connection's destructor checks for that (close() would not).
  conn_.reset();
}

bool GroupSubscriber::subscribe(const std::string& channel) {
  if (channels_.insert(channel).second) shared_->kept[channel];
  if (!ensure_connected(timeout_)) return false;
  return confirmed_.count(channel) > 0 || confirm(channel, timeout_);
}

void GroupSubscriber::unsubscribe(const std::string& channel) {
  if (channels_.erase(channel) == 0) return;
  shared_->kept.erase(channel);
  if (confirmed_.erase(channel) == 0 || !conn_ || !conn_->open()) return;
  RedisNode* target = conn_target_;
  const uint64_t id = conn_->id();
  // The confirmation is not waited for: the server's answer is dropped here.
  conn_->to_server([target, id, channel] { target->unsubscribe(id, channel); });
}

std::optional<std::string> GroupSubscriber::wait_message(const std::string& channel,
                                                         Duration timeout) {
  LOCKSIM_ASSERT_MSG(timeout >= Duration::zero(), "a wait of negative length");
  LOCKSIM_ASSERT_MSG(channels_.count(channel) > 0, "a wait on a channel never subscribed");
  const TimePoint deadline = world_.now() + timeout;
  std::deque<std::string>& kept = shared_->kept.at(channel);
  // Each round ends in a message, the deadline, or a wake by a failed link
  // that the next round repairs: time moves on in every round that repeats.
  while (true) {
    if (!kept.empty()) {
      std::string message = std::move(kept.front());
      kept.pop_front();
      return message;
    }
    const TimePoint now = world_.now();
    if (now >= deadline) return std::nullopt;
    const Duration limit = std::min(timeout_, deadline - now);
    const bool usable = conn_ && conn_->open() && conn_target_ == &group_.published_primary();
    if (!usable || confirmed_.count(channel) == 0) {
      const bool ok =
          ensure_connected(limit) && (confirmed_.count(channel) > 0 || confirm(channel, limit));
      if (!ok) {
        const Duration left = deadline - world_.now();
        if (left > Duration::zero()) world_.sleep(std::min(kReconnectPause, left));
      }
      // Connecting and subscribing took time (each up to `limit`, so
      // together past the deadline): a message may have come meanwhile, or
      // the deadline passed. The next round looks at both before it blocks.
      continue;
    }
    LOCKSIM_ASSERT_MSG(world_.now() < deadline, "a round blocks only before its deadline");
    block_until(channel, deadline);
  }
}

bool GroupSubscriber::ensure_connected(Duration limit) {
  RedisNode* target = &group_.published_primary();
  if (conn_ && (conn_target_ != target || !conn_->open())) drop_connection();
  if (conn_) return true;
  std::string error;
  conn_ = dial(world_, net_, client_, target->node(), limit, error);
  if (!conn_) return false;
  conn_target_ = target;
  shared_->connection = conn_->id();
  shared_->pongs = 0;
  schedule_ping(shared_, conn_->id(), 0);
  watch_failures();
  const std::vector<std::string> held(channels_.begin(), channels_.end());
  for (const std::string& channel : held) {
    if (!confirm(channel, limit)) return false;  // dropped the connection
  }
  // Pair of drop_connection(): an open connection has every held channel.
  LOCKSIM_ASSERT(conn_ && confirmed_ == channels_);
  return true;
}

bool GroupSubscriber::confirm(const std::string& channel, Duration limit) {
  LOCKSIM_ASSERT_MSG(conn_ && conn_->open(), "SUBSCRIBE on a connection that is not open");
  RedisNode* target = conn_target_;
  const uint64_t id = conn_->id();
  RedisNode::Inbox inbox = [shared = shared_, id](const std::string& ch, const std::string& m) {
    shared->receive(id, ch, m);
  };
  CallResult<Reply> r = call<Reply>(
      world_, *conn_,
      [target, id, channel, inbox = std::move(inbox)] {
        return target->subscribe(id, channel, inbox);
      },
      limit);
  if (r.outcome == CallOutcome::kReply) {
    // The server confirms with ["subscribe", channel, count] (redis_node_pubsub.cpp).
    LOCKSIM_ASSERT(r.reply->kind == Reply::Kind::kArray && r.reply->elements.size() == 3);
    watch_failures();
    confirmed_.insert(channel);
    return true;
  }
  drop_connection();
  return false;
}

void GroupSubscriber::drop_connection() {
  if (conn_) {
    conn_->on_failure({});
    conn_->close();
  }
  conn_.reset();
  conn_target_ = nullptr;
  confirmed_.clear();
  shared_->connection = 0;
}

void GroupSubscriber::watch_failures() {
  LOCKSIM_ASSERT(conn_ != nullptr);
  // A raw pointer: shared_ outlives conn_ (declared before it), and the
  // handler goes with the connection or with drop_connection().
  conn_->on_failure(
      FailureHandler{[](void* context, ConnectionState) { static_cast<Shared*>(context)->wake(); },
                     shared_.get()});
}

void GroupSubscriber::schedule_ping(const std::shared_ptr<Shared>& shared, uint64_t id,
                                    uint64_t ping) {
  // `ping` is the PING sent one interval ago (0: none yet). The check runs
  // in the client's process: held while it is paused, gone with a crash.
  shared->world->after(kPingInterval, [shared, id, ping] {
    shared->client->deliver([shared, id, ping] {
      Network& net = *shared->net;
      if (!shared->alive || shared->connection != id) return;
      if (net.connection_state(id) != ConnectionState::kOpen) return;
      if (shared->pongs < ping) {  // unanswered for a whole interval
        net.close_connection(id);
        shared->wake();  // the wait reconnects
        return;
      }
      const uint64_t next = ping + 1;
      net.send_on(id, true, [shared, &net, id, next] {
        net.send_on(id, false, [shared, id, next] {
          if (shared->connection == id) shared->pongs = std::max(shared->pongs, next);
        });
      });
      schedule_ping(shared, id, next);
    });
  });
}

void GroupSubscriber::block_until(const std::string& channel, TimePoint deadline) {
  Shared& s = *shared_;
  LOCKSIM_ASSERT_MSG(s.waiting == nullptr, "two waits on one subscriber");
  Waiter waiter;
  s.waiting = &waiter;
  s.waiting_channel = channel;
  const uint64_t wait = s.waits;
  world_.after(deadline - world_.now(), [shared = shared_, wait] {
    if (shared->waits == wait) shared->wake();
  });
  // However the wait ends (a message, the deadline, a failure, a crash).
  struct Ended {
    Shared& s;
    ~Ended() {
      s.waiting = nullptr;
      s.waiting_channel.clear();
      ++s.waits;
    }
  } ended{s};
  world_.block(waiter);
}

}  // namespace locksim::sim::redis
