// The fixture of the Redis topology tests (redis_topology_test.cpp:
// replication, expiry, read-only replicas, persistence; redis_failover_test.cpp:
// failover, GroupConnection, determinism): one group of simulated Redis nodes
// in a World, driven at exact virtual times.
#pragma once

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
#include "tests/reply_print.h"

namespace locksim::sim::redis {

using Argv = std::vector<std::string>;
using Keys = std::map<std::string, Server::Entry>;

inline constexpr TimePoint ms(int64_t v) {
  return TimePoint{} + Duration::millis(v);
}
inline constexpr Duration kOneNs = Duration::nanos(1);

// Zero network latency, so the only delay between a write and a replica is
// replication_lag itself and the tests can name exact instants.
inline constexpr LinkParams kInstantLink{Duration::zero(), Duration::zero(), 0.0};

inline constexpr char kReadonly[] = "READONLY You can't write against a read only replica.";

// One group laid out as harness/simulation.cpp builds it: members[0] is the
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

inline bool has_key(RedisNode& n, const std::string& key) {
  return n.server().keys().count(key) == 1;
}

inline Topology failover_topology() {
  Topology t;
  t.replication_lag = Duration::millis(10);
  t.failover = true;
  t.down_after = Duration::seconds(1);
  t.discovery_delay = Duration::millis(500);
  return t;
}

}  // namespace locksim::sim::redis
