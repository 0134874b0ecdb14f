// The server side of subscribed connections (pubsub.c of Redis 7.0): the
// registry is the Server's (commands_pubsub.cpp), keyed by connection id;
// here each subscription gets its connection's inbox, and each published
// message travels to its receivers on their connections, as a server writes
// it to their sockets.
#include <string>
#include <utility>

#include "env/assert.h"
#include "sim/redis/redis_node.h"

namespace locksim::sim::redis {

namespace {

Reply confirmation(const char* kind, const std::string& channel, size_t channels) {
  return Reply::array({Reply::bulk(kind), Reply::bulk(channel),
                       Reply::integer_reply(static_cast<int64_t>(channels))});
}

}  // namespace

Reply RedisNode::subscribe(uint64_t client, const std::string& channel, Inbox inbox) {
  LOCKSIM_ASSERT_MSG(node().running(), "a SUBSCRIBE handled on a node that is not running");
  LOCKSIM_ASSERT_MSG(client != 0 && inbox != nullptr, "a subscriber is a connection with an inbox");
  forget_closed_subscribers();
  ++commands_;
  server_->subscribe(client, channel);
  inboxes_[client] = std::move(inbox);
  return confirmation("subscribe", channel, server_->channels_of(client));
}

Reply RedisNode::unsubscribe(uint64_t client, const std::string& channel) {
  LOCKSIM_ASSERT_MSG(node().running(), "an UNSUBSCRIBE handled on a node that is not running");
  forget_closed_subscribers();
  ++commands_;
  server_->unsubscribe(client, channel);
  const size_t left = server_->channels_of(client);
  if (left == 0) inboxes_.erase(client);
  return confirmation("unsubscribe", channel, left);
}

void RedisNode::forget_closed_subscribers() {
  for (auto it = inboxes_.begin(); it != inboxes_.end();) {
    if (net_.connection_state(it->first) == ConnectionState::kOpen) {
      ++it;
      continue;
    }
    server_->unsubscribe_all(it->first);
    it = inboxes_.erase(it);
  }
}

void RedisNode::deliver(const Server::Publication& publication) {
  for (const Server::SubscriberId receiver : publication.receivers) {
    const auto it = inboxes_.find(receiver);
    // Registered on the Server directly (a test's subscriber): no connection.
    if (it == inboxes_.end()) continue;
    net_.send_on(receiver, false,
                 [inbox = it->second, channel = publication.channel,
                  message = publication.message] { inbox(channel, message); });
  }
}

}  // namespace locksim::sim::redis
