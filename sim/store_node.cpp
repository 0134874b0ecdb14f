#include "sim/store_node.h"

#include "env/assert.h"
#include "sim/rpc.h"

namespace locksim::sim {

// One client's connection: one TCP connection (sim/connection.h), opened on
// first use and again after a failure; each access is one RPC with the
// store's timeout, after which the client closes the connection (what it sent
// still reaches the store and runs there: a late write).
class StoreConnection : public ResourceConnection {
 public:
  StoreConnection(StoreNode& store, Node& client, int client_index)
      : store_(store), client_(client), client_index_(client_index) {}

  ResourceReply access(const ResourceRequest& request) override {
    // The workload fills in who asks; a mismatch would corrupt the evidence.
    LOCKSIM_ASSERT_MSG(request.client == client_index_, "a request sent on another's connection");
    StoreNode& s = store_;
    const Duration timeout = s.store_.params().timeout;
    if (conn_ && !conn_->open()) conn_.reset();
    if (!conn_) {
      std::string error;
      conn_ = dial(s.world_, s.net_, client_, s.node_, timeout, error);
      if (!conn_) return failed("store " + error);
    }
    CallResult<ResourceReply> r = call<ResourceReply>(
        s.world_, *conn_, [&s, request] { return s.store_.execute(request, s.world_.now()); },
        timeout);
    if (r.outcome == CallOutcome::kReply) return std::move(*r.reply);
    conn_->close();
    conn_.reset();
    if (r.outcome == CallOutcome::kTimeout) {
      return failed("store timeout after " + std::to_string(timeout.to_ms()) + " ms");
    }
    return failed(r.outcome == CallOutcome::kReset ? "store connection reset by peer"
                                                   : "store connection timed out");
  }

 private:
  static ResourceReply failed(std::string why) {
    ResourceReply lost;
    lost.status = ResourceReply::Status::kTimeout;
    lost.detail = std::move(why);
    return lost;
  }

  StoreNode& store_;
  Node& client_;
  int client_index_;
  std::unique_ptr<Connection> conn_;
};

StoreNode::StoreNode(World& world, Network& net, const ResourceParams& params)
    : world_(world), net_(net), node_(world, kName), store_(params) {
  LOCKSIM_ASSERT(params.workload != Workload::kNone);
  LOCKSIM_ASSERT(params.timeout > Duration::zero());
}

std::unique_ptr<ResourceConnection> StoreNode::connect(Node& client, int client_index) {
  LOCKSIM_ASSERT(client_index >= 0);
  return std::make_unique<StoreConnection>(*this, client, client_index);
}

}  // namespace locksim::sim
