#include "harness/grant_watch.h"

#include <algorithm>
#include <map>
#include <utility>

#include "env/assert.h"

namespace locksim::harness {

GrantWatch::GrantWatch(sim::World& world, sim::Deployment& deployment, sim::LockProbe probe,
                       std::vector<std::string> clients)
    : world_(world),
      deployment_(deployment),
      probe_(std::move(probe)),
      clients_(std::move(clients)) {
  LOCKSIM_ASSERT(probe_.quorum >= 1 && !clients_.empty());
}

void GrantWatch::arm(std::function<void(std::string)> fired) {
  LOCKSIM_ASSERT(fired != nullptr);
  // Not looked at while nobody waited: what the lock holds now is not a grant
  // that comes after now.
  if (waiting_.empty()) granted_ = granted_token();
  waiting_.push_back(std::move(fired));
  if (!observing_) {
    observing_ = true;
    world_.add_event_observer([this] { look(); });
  }
}

void GrantWatch::look() {
  if (waiting_.empty()) return;
  std::string token = granted_token();
  if (token == granted_) return;
  granted_ = std::move(token);
  if (granted_.empty()) return;  // released, expired or lost: not a grant
  const std::string grantee = client_of(granted_);
  std::vector<std::function<void(std::string)>> fired;
  fired.swap(waiting_);
  // In events of their own: a fault changes the network and the nodes,
  // which an observer, called between two events, must not.
  for (auto& f : fired) {
    world_.at(world_.now(), [f = std::move(f), grantee] { f(grantee); });
  }
  LOCKSIM_ASSERT(waiting_.empty());
}

std::string GrantWatch::granted_token() {
  std::map<std::string, size_t> serving_holders;
  for (const sim::ServerLockState& s : deployment_.lock_states(probe_)) {
    if (s.kind == sim::ServerLockState::Kind::kHeld && s.serving) ++serving_holders[s.holder];
  }
  for (const auto& [token, count] : serving_holders) {
    if (count >= probe_.quorum && !token.empty()) return token;
  }
  return "";
}

std::string GrantWatch::client_of(const std::string& token) const {
  const size_t colon = token.find(':');
  if (colon == std::string::npos) return "";
  const std::string prefix = token.substr(0, colon);
  const bool known = std::find(clients_.begin(), clients_.end(), prefix) != clients_.end();
  return known ? prefix : "";
}

}  // namespace locksim::harness
