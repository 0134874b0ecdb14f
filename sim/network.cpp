#include "sim/network.h"

#include "sim/node.h"
#include "sim/world.h"

namespace locksim::sim {

Network::Network(World& world, Rng rng) : world_(world), rng_(rng) {}

Network::Pair Network::key(const Node& a, const Node& b) {
  return a.name() < b.name() ? Pair{a.name(), b.name()} : Pair{b.name(), a.name()};
}

void Network::set_link(const Node& a, const Node& b, const LinkParams& p) {
  links_[key(a, b)] = p;
}

const LinkParams& Network::link(const Node& a, const Node& b) const {
  auto it = links_.find(key(a, b));
  return it == links_.end() ? default_link_ : it->second;
}

void Network::partition(const std::vector<const Node*>& side_a,
                        const std::vector<const Node*>& side_b) {
  for (const Node* a : side_a) {
    for (const Node* b : side_b) {
      if (a != b) cut_.insert(key(*a, *b));
    }
  }
}

void Network::heal() {
  cut_.clear();
}

bool Network::connected(const Node& a, const Node& b) const {
  return &a == &b || cut_.count(key(a, b)) == 0;
}

void Network::send(const Node& from, Node& to, std::function<void()> message) {
  ++sent_;
  const LinkParams& p = link(from, to);
  // Draw both numbers every time, lost or not, so a partition elsewhere does
  // not shift this link's later latencies.
  const bool lost = rng_.chance(p.loss);
  const Duration latency = p.latency_base + rng_.exponential(p.latency_jitter_mean);
  if (lost || !connected(from, to)) {
    ++dropped_;
    return;
  }
  const Node* from_ptr = &from;
  Node* to_ptr = &to;
  world_.after(latency, [this, from_ptr, to_ptr, message = std::move(message)]() mutable {
    if (!connected(*from_ptr, *to_ptr)) {
      ++dropped_;
      return;
    }
    to_ptr->deliver(std::move(message));
  });
}

}  // namespace locksim::sim
