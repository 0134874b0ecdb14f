#include "sim/redis/redis_node.h"

#include "sim/rpc.h"

namespace locksim::sim::redis {

RedisNode::RedisNode(World& world, Network& net, std::string name, uint64_t seed,
                     Duration clock_offset)
    : world_(world), node_(world, std::move(name), clock_offset), seed_(seed) {
  (void)net;
  server_ = std::make_unique<Server>(seed_);
  node_.on_crash = [this] {
    // No persistence: a restarted redis-server starts empty.
    server_->flush_all();
  };
  schedule_active_expiry();
}

Reply RedisNode::execute(const std::vector<std::string>& argv) {
  ++commands_;
  return server_->execute(argv, node_.local_now());
}

void RedisNode::schedule_active_expiry() {
  world_.after(kActiveExpiryPeriod, [this] {
    if (node_.running()) server_->active_expire(node_.local_now());
    schedule_active_expiry();
  });
}

SimRedisConnection::SimRedisConnection(World& world, Network& net, Node& client,
                                       RedisNode& server, Duration timeout)
    : world_(world), net_(net), client_(client), server_(server), timeout_(timeout) {}

Reply SimRedisConnection::command(const std::vector<std::string>& argv) {
  RedisNode* server = &server_;
  std::optional<Reply> reply = call<Reply>(
      world_, net_, client_, server_.node(), [server, argv] { return server->execute(argv); },
      timeout_);
  if (!reply) return Reply::io_error("timeout after " + std::to_string(timeout_.to_ms()) + " ms");
  return std::move(*reply);
}

}  // namespace locksim::sim::redis
