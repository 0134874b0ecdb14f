#include "sim/zookeeper/deployment.h"

namespace locksim::sim::zookeeper {

namespace {

ZkParams validated(const ZkParams& p) {
  p.validate("zookeeper.");
  return p;
}

}  // namespace

ZkDeployment::ZkDeployment(World& world, Network& net, const ZkParams& params)
    : params_(validated(params)), ensemble_(std::make_unique<ZkEnsemble>(world, net, params_)) {}

std::vector<std::string> ZkDeployment::node_names() const {
  std::vector<std::string> out;
  for (int id = 1; id <= ensemble_->size(); ++id) out.push_back("zk-" + std::to_string(id));
  return out;
}

std::vector<Node*> ZkDeployment::nodes() {
  std::vector<Node*> out;
  for (int id = 1; id <= ensemble_->size(); ++id) out.push_back(&ensemble_->server(id).node());
  return out;
}

std::unique_ptr<ZkClient> ZkDeployment::connect_client(Node& client, Rng rng) {
  return std::make_unique<ZkClient>(*ensemble_, client, rng);
}

bool ZkDeployment::lock_free_for_fresh_contender(const std::string& lock_path) {
  const ZkServer* leader = ensemble_->serving_leader();
  if (leader == nullptr) return false;
  const ZkChildrenResult children = leader->tree().children(lock_path);
  return children.error == ZkError::kNoNode || children.children.empty();
}

uint64_t ZkDeployment::requests_handled() const {
  uint64_t n = 0;
  for (int id = 1; id <= ensemble_->size(); ++id) n += ensemble_->server(id).requests_handled();
  return n;
}

}  // namespace locksim::sim::zookeeper
