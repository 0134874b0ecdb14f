// The simulated ZooKeeper deployment as the runner's backend seam sees it:
// build the servers from the parameters, name the nodes faults may target,
// hand each client its ZkConnection, and answer "would a fresh contender get
// the lock right now?" for the exposure checker.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "env/zk_connection.h"
#include "sim/backend.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/rng.h"
#include "sim/world.h"
#include "sim/zookeeper/ensemble.h"
#include "sim/zookeeper/zk_client.h"
#include "sim/zookeeper/zk_params.h"

namespace locksim::sim::zookeeper {

class ZkDeployment {
 public:
  // Validates `params` (ConfigError naming "zookeeper.<field>"), then builds
  // the ensemble on `world` and `net`, which must outlive this object.
  ZkDeployment(World& world, Network& net, const ZkParams& params);

  // "zk-1".."zk-N", in order: what fault schedules name.
  std::vector<std::string> node_names() const;
  // The same nodes, in the same order, for the nemesis's name map.
  std::vector<Node*> nodes();

  // A new client library handle for the process on `client`, with its own
  // seeded stream (the server it tries first). The handle does not connect
  // until first used. `client` must outlive it. The runner should call
  // ZkClient::on_process_crash() from the client node's on_crash.
  std::unique_ptr<ZkClient> connect_client(Node& client, Rng rng);

  // Whether a contender arriving now would take the lock at `lock_path`
  // (the recipe's parent node) at once: a leader serves (a quorum is up) and
  // the lock node has no children (nobody holds it or waits for it). Reads
  // the leader's applied tree; no side effects.
  bool lock_free_for_fresh_contender(const std::string& lock_path);
  // ZkEnsemble::state_stamp: moves whenever that answer may have changed.
  uint64_t lock_state_stamp() const { return ensemble_->state_stamp(); }
  // Each server's view of the lock (its lowest child of `lock_path`), by id;
  // serving: the serving leader.
  std::vector<ServerLockState> lock_states(const std::string& lock_path);

  // The timeout every session gets: the requested one clamped to [2, 20] ticks.
  Duration negotiated_timeout() const { return params_.negotiate(params_.session_timeout); }
  const ZkParams& params() const { return params_; }
  ZkEnsemble& ensemble() { return *ensemble_; }
  const ZkEnsemble& ensemble() const { return *ensemble_; }
  uint64_t requests_handled() const;

 private:
  ZkParams params_;
  std::unique_ptr<ZkEnsemble> ensemble_;
};

}  // namespace locksim::sim::zookeeper
