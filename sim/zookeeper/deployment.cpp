#include "sim/zookeeper/deployment.h"

#include <string_view>

namespace locksim::sim::zookeeper {

namespace {

ZkParams validated(const ZkParams& p) {
  p.validate("zookeeper.");
  return p;
}

// The sequence suffix of a sequential node's name ("lock-0000000003" ->
// "0000000003"), which orders the waiters.
std::string_view sequence_of(const std::string& name) {
  constexpr size_t kDigits = 10;
  std::string_view v = name;
  return v.size() <= kDigits ? v : v.substr(v.size() - kDigits);
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
  return leader->tree().child_count(lock_path) == 0;
}

std::vector<ServerLockState> ZkDeployment::lock_states(const std::string& lock_path) {
  const ZkServer* leader = ensemble_->serving_leader();
  std::vector<ServerLockState> out;
  for (int id = 1; id <= ensemble_->size(); ++id) {
    ZkServer& server = ensemble_->server(id);
    ServerLockState state{server.node().name(), ServerLockState::Kind::kAbsent, "",
                          &server == leader};
    if (!server.node().running()) {
      state.kind = ServerLockState::Kind::kDown;
    } else {
      // The holder is the child with the lowest sequence number, the last
      // ten digits of its name (Curator prefixes a GUID).
      const ZkChildrenResult children = server.tree().children(lock_path);
      const std::string* lowest = nullptr;
      for (const std::string& c : children.children) {
        if (lowest == nullptr || sequence_of(c) < sequence_of(*lowest)) lowest = &c;
      }
      if (lowest != nullptr) {
        state.kind = ServerLockState::Kind::kHeld;
        state.holder = lock_path + "/" + *lowest;
      }
    }
    out.push_back(std::move(state));
  }
  return out;
}

uint64_t ZkDeployment::requests_handled() const {
  uint64_t n = 0;
  for (int id = 1; id <= ensemble_->size(); ++id) n += ensemble_->server(id).requests_handled();
  return n;
}

}  // namespace locksim::sim::zookeeper
