// PUBLISH with its subscription registry, and WAIT's arguments (pubsub.c and
// replication.c of Redis 7.0).
//
// The registry is the server side of SUBSCRIBE/UNSUBSCRIBE, kept by channel
// in ordered containers: PUBLISH answers how many subscribers a message
// reached, and hands the message (with its receivers, in subscriber order)
// to the node through the publication sink, which delivers it and, on a
// master, propagates it to the replicas as Redis does.
//
// WAIT needs replicas, time and a reply that may come later: RedisNode has
// them, and answers WAIT itself (redis_node_wait.cpp). A Server alone is a
// master without replicas: it answers WAIT with 0, the number Redis gives
// after its timeout (the time spent blocking is not modelled here).
#include <iterator>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "env/assert.h"
#include "sim/redis/command_util.h"
#include "sim/redis/server.h"

namespace locksim::sim::redis {

bool Server::subscribe(SubscriberId subscriber, const std::string& channel) {
  return channels_[channel].insert(subscriber).second;
}

bool Server::unsubscribe(SubscriberId subscriber, const std::string& channel) {
  auto it = channels_.find(channel);
  if (it == channels_.end() || it->second.erase(subscriber) == 0) return false;
  if (it->second.empty()) channels_.erase(it);
  return true;
}

size_t Server::unsubscribe_all(SubscriberId subscriber) {
  size_t removed = 0;
  for (auto it = channels_.begin(); it != channels_.end();) {
    removed += it->second.erase(subscriber);
    it = it->second.empty() ? channels_.erase(it) : std::next(it);
  }
  return removed;
}

size_t Server::subscribers(const std::string& channel) const {
  const auto it = channels_.find(channel);
  return it == channels_.end() ? 0 : it->second.size();
}

size_t Server::channels_of(SubscriberId subscriber) const {
  size_t count = 0;
  for (const auto& [channel, subscribers] : channels_) count += subscribers.count(subscriber);
  return count;
}

int64_t Server::publish(const std::string& channel, const std::string& message) {
  Publication publication{channel, message, {}};
  const auto it = channels_.find(channel);
  if (it != channels_.end()) {
    // A kept channel has subscribers (unsubscribe drops an emptied one).
    LOCKSIM_ASSERT(!it->second.empty());
    publication.receivers.assign(it->second.begin(), it->second.end());
  }
  const auto receivers = static_cast<int64_t>(publication.receivers.size());
  if (publication_sink_) publication_sink_(publication);
  return receivers;
}

Reply Server::cmd_publish(const Argv& argv, int64_t /*now_ms*/) {
  return Reply::integer_reply(publish(argv[1], argv[2]));
}

// waitCommand's checks after the replica check (RedisNode's): numreplicas
// with the generic integer error, then the timeout with its own texts.
std::variant<Server::WaitRequest, Reply> Server::parse_wait(const std::vector<std::string>& argv) {
  LOCKSIM_ASSERT_MSG(argv.size() == 3, "WAIT's arity is checked before its arguments");
  const std::optional<int64_t> numreplicas = string2ll(argv[1]);
  if (!numreplicas) return kNotInteger;
  const std::optional<int64_t> timeout_ms = string2ll(argv[2]);
  if (!timeout_ms) return Reply::error("ERR timeout is not an integer or out of range");
  if (*timeout_ms < 0) return Reply::error("ERR timeout is negative");
  return WaitRequest{*numreplicas, *timeout_ms};
}

Reply Server::cmd_wait(const Argv& argv, int64_t /*now_ms*/) {
  const auto parsed = parse_wait(argv);
  if (const Reply* error = std::get_if<Reply>(&parsed)) return *error;
  return Reply::integer_reply(0);  // no replicas (see the top of this file)
}

}  // namespace locksim::sim::redis
