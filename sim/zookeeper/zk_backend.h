// The ZooKeeper deployment behind the runner's backend seam (sim/backend.h):
// a thin adapter around ZkDeployment that names the servers zk-1..zk-N for
// faults, gives each client node one ZkClient handle, kills that handle when
// the client's process crashes, and reports the negotiated session timeout
// and every session the ensemble expired (last heartbeat and deadline).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/backend.h"
#include "sim/zookeeper/deployment.h"

namespace locksim::sim::zookeeper {

class ZkBackend : public Deployment {
 public:
  // Validates `params` (ConfigError naming "zookeeper.<field>") and builds
  // the ensemble on `world` and `net`, which must outlive this object.
  ZkBackend(World& world, Network& net, const ZkParams& params);

  void name_nodes(std::map<std::string, Node*>& nodes) override;
  // One ZkClient for `client`, with its own stream split from the World's
  // root under "<client>/zk". Called at most once per client node.
  ClientConnections connect(Node& client) override;
  BackendCounters counters() const override;
  void client_crashed(Node& client) override;
  std::vector<BackendNote> notes() const override;
  // ZkDeployment's answer for the lock node probe.key (a leader serves and
  // the node has no children).
  // Only events change it: a node is created or deleted, a session expires
  // at a server's tick, the leader goes.
  std::optional<LockExposure> lock_free_for_fresh_contender(const LockProbe& probe) override {
    return LockExposure{deployment_.lock_free_for_fresh_contender(probe.key)};
  }
  // The ensemble's stamp (ZkEnsemble::state_stamp), so the exposure monitor
  // asks only when that answer may have changed: asking after every event
  // was a sixth of a zk-curator run.
  std::optional<uint64_t> lock_state_stamp() const override {
    return deployment_.lock_state_stamp();
  }

  std::vector<ServerLockState> lock_states(const LockProbe& probe) override {
    return deployment_.lock_states(probe.key);
  }

  ZkDeployment& deployment() { return deployment_; }

  // Expired sessions a report lists one by one; the rest are counted.
  static constexpr size_t kExpiriesListedMax = 10;

 private:
  // The client node whose handle was granted `s`, or "?" (never expected).
  std::string client_of(SessionId s) const;

  World& world_;
  ZkDeployment deployment_;
  // Client node name -> its handle, owned by the client's Env. Ordered, so
  // lookups and reports never depend on hashing.
  std::map<std::string, ZkClient*> clients_;
};

}  // namespace locksim::sim::zookeeper
