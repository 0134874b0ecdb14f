// A simulated Redis server on a simulated node, reachable over the network.
//
// Joins the pure command executor (Server) to the world: each request is
// executed on arrival with the node's own clock, frozen for the command;
// active expiry runs every 100 ms of true time while the node is up; a crash
// loses the keyspace (persistence modes come with issue 3).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "env/redis_connection.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/redis/server.h"
#include "sim/world.h"

namespace locksim::sim::redis {

class RedisNode {
 public:
  RedisNode(World& world, Network& net, std::string name, uint64_t seed,
            Duration clock_offset = Duration::zero());

  Node& node() { return node_; }
  Server& server() { return *server_; }
  uint64_t commands_executed() const { return commands_; }

  // Executes one command now, at the node. Runs on the main context.
  Reply execute(const std::vector<std::string>& argv);

  // Redis's hz 10: the active expiry cycle runs every 100 ms.
  static constexpr Duration kActiveExpiryPeriod = Duration::millis(100);

 private:
  void schedule_active_expiry();

  World& world_;
  Node node_;
  uint64_t seed_;
  std::unique_ptr<Server> server_;
  uint64_t commands_ = 0;
};

// One client's connection to a RedisNode over the simulated network.
class SimRedisConnection : public RedisConnection {
 public:
  SimRedisConnection(World& world, Network& net, Node& client, RedisNode& server,
                     Duration timeout);

  Reply command(const std::vector<std::string>& argv) override;
  std::string server_name() const override { return server_.node().name(); }

 private:
  World& world_;
  Network& net_;
  Node& client_;
  RedisNode& server_;
  Duration timeout_;
};

}  // namespace locksim::sim::redis
