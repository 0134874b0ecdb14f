#include "harness/grant_watch.h"

#include <algorithm>
#include <utility>

#include "env/assert.h"

namespace locksim::harness {

GrantWatch::GrantWatch(sim::World& world, sim::Deployment& deployment, sim::LockProbe probe,
                       std::vector<std::string> clients, bool use_stamp)
    : world_(world),
      deployment_(deployment),
      probe_(std::move(probe)),
      clients_(std::move(clients)),
      stamp_(deployment, use_stamp) {
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
  if (waiting_.empty() || !stamp_.may_have_changed(world_.now())) return;
  const std::string_view token = granted_token();
  if (token == granted_) return;
  granted_ = token;
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

std::string_view GrantWatch::granted_token() {
  using Kind = sim::ServerLockState::Kind;
  deployment_.fill_lock_states(probe_, states_);
  stamp_.noted(states_);
  const std::string* least = nullptr;
  for (const sim::ServerLockState& s : states_) {
    if (s.kind != Kind::kHeld || !s.serving || s.holder.empty()) continue;
    if (least != nullptr && !(s.holder < *least)) continue;  // only a lesser token can win
    // A handful of servers: counting each holder's copies beats a map.
    size_t copies = 0;
    for (const sim::ServerLockState& t : states_) {
      copies += t.kind == Kind::kHeld && t.serving && t.holder == s.holder ? 1 : 0;
    }
    if (copies >= probe_.quorum) least = &s.holder;
  }
  return least == nullptr ? std::string_view() : std::string_view(*least);
}

std::string GrantWatch::client_of(const std::string& token) const {
  const size_t colon = token.find(':');
  if (colon == std::string::npos) return "";
  const std::string prefix = token.substr(0, colon);
  const bool known = std::find(clients_.begin(), clients_.end(), prefix) != clients_.end();
  return known ? prefix : "";
}

}  // namespace locksim::harness
