// The guarded resource as a machine of the simulated world: node "store",
// faultable like any other (pause, crash-restart, partition, clock faults),
// holding one ResourceStore; and each client's connection to it.
//
// Requests travel over the Network like every backend's (sim/rpc.h): a
// frozen or cut-off store is silent and the client times out, a request held
// by a partition may still be executed after the client gave up. The store's
// state survives a crash-restart (see resource_store.h).
#pragma once

#include <memory>

#include "env/resource_connection.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/resource_store.h"
#include "sim/world.h"

namespace locksim::sim {

class StoreNode {
 public:
  // What fault schedules name.
  static constexpr const char* kName = "store";

  // Precondition: params.workload != kNone. `world` and `net` outlive it.
  StoreNode(World& world, Network& net, const ResourceParams& params);

  Node& node() { return node_; }
  const ResourceStore& store() const { return store_; }

  // A connection from the client running on `client` (which must outlive it).
  std::unique_ptr<ResourceConnection> connect(Node& client, int client_index);

 private:
  friend class StoreConnection;
  World& world_;
  Network& net_;
  Node node_;
  ResourceStore store_;
};

}  // namespace locksim::sim
