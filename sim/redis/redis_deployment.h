// The simulated Redis deployment behind the backend seam: `masters`
// independent groups redis-1..redis-N, each a master with `replicas`
// asynchronous replicas (redis-1-r1, ...), and, with failover, one
// Sentinel-like observer node "sentinel". Each client gets one connection per
// group, in group order (Redlock's N servers; the others use the first), and
// one pub/sub connection per group beside it (subscriber_connection.h).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/backend.h"
#include "sim/network.h"
#include "sim/redis/redis_node.h"
#include "sim/redis/topology.h"
#include "sim/world.h"

namespace locksim::sim::redis {

class RedisDeployment : public Deployment {
 public:
  // `topology` must be resolved (masters >= 1). Each server's Lua random
  // stream is split from the World's root stream under the server's name, in
  // group order, so adding a component elsewhere never changes its numbers.
  RedisDeployment(World& world, Network& net, const Topology& topology);

  void name_nodes(std::map<std::string, Node*>& nodes) override;
  ClientConnections connect(Node& client) override;
  BackendCounters counters() const override;
  // Free at a group when its current master runs and holds no live key
  // `probe.key` (expired by the master's own clock, gone, or with
  // value_is_deadline_ms a deadline a correct clock has reached); free when
  // at least probe.quorum groups are. Until the first group's key expires.
  std::optional<LockExposure> lock_free_for_fresh_contender(const LockProbe& probe) override;
  std::optional<uint64_t> lock_state_stamp() const override;
  bool lock_state_stamp_is_world_count() const override { return true; }
  // Every server, masters and replicas, group by group; with the fair
  // lock's queue when the probe names one.
  std::vector<ServerLockState> lock_states(const LockProbe& probe) override;
  void fill_lock_states(const LockProbe& probe, std::vector<ServerLockState>& out) override;
  // Primaries: each group's first master; the observer: the sentinel.
  Roles roles() const override;

 private:
  World& world_;
  Network& net_;
  Topology topology_;
  // Declaration order is teardown order in reverse: groups refer to servers
  // and the sentinel, so they go first.
  std::unique_ptr<Node> sentinel_;
  std::vector<std::unique_ptr<RedisNode>> servers_;
  std::vector<std::unique_ptr<ReplicaGroup>> groups_;

  // The lock on one server, judged by that server's clock (and, for a
  // GETSET deadline, a correct clock's): see() without copying a string
  // (the exposure monitor's per-event question), server_state() with names,
  // written over `out` so its strings keep their room (the tracer's question).
  struct Seen {
    ServerLockState::Kind kind = ServerLockState::Kind::kAbsent;
    TimePoint expires = LockExposure::kNoChange;  // as ServerLockState::expires
    const std::string* holder = nullptr;          // in the server's keyspace; kHeld, kExpired
  };
  Seen see(RedisNode& server, const LockProbe& probe) const;
  void server_state(RedisNode& server, bool serving, const LockProbe& probe,
                    ServerLockState& out) const;
  // The fair lock's queue on `server` (probe.queue_key), head first, as
  // stored, written over out.queue; read-only, as see().
  void queue_state(RedisNode& server, const LockProbe& probe, ServerLockState& out) const;
};

}  // namespace locksim::sim::redis
