#include "sim/network.h"

#include "env/assert.h"
#include "sim/node.h"
#include "sim/world.h"

namespace locksim::sim {

namespace {

// What the scenario loader and run validation guarantee (bad values there
// are exit 2); here they are invariants.
bool valid(const LinkParams& p) {
  return p.latency_base >= Duration::zero() && p.latency_jitter_mean >= Duration::zero() &&
         p.loss >= 0.0 && p.loss <= 1.0;
}

}  // namespace

Network::Network(World& world, Rng rng) : world_(world), rng_(rng) {}

Network::Pair Network::key(const Node& a, const Node& b) {
  return a.name() < b.name() ? Pair{a.name(), b.name()} : Pair{b.name(), a.name()};
}

void Network::set_default_link(const LinkParams& p) {
  LOCKSIM_ASSERT_MSG(valid(p), "link parameters out of range");
  default_link_ = p;
}

void Network::set_link(const Node& a, const Node& b, const LinkParams& p) {
  LOCKSIM_ASSERT_MSG(valid(p), "link parameters out of range");
  LOCKSIM_ASSERT_MSG(&a != &b, "a link joins two nodes");
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
      LOCKSIM_ASSERT(a != nullptr && b != nullptr);
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
  LOCKSIM_ASSERT_MSG(latency >= p.latency_base, "a message faster than the link allows");
  if (lost || !connected(from, to)) {
    ++dropped_;
    check_counts();
    return;
  }
  ++in_flight_;
  const Node* from_ptr = &from;
  Node* to_ptr = &to;
  const TimePoint arrives = world_.now() + latency;
  world_.after(latency, [this, from_ptr, to_ptr, arrives, message = std::move(message)]() mutable {
    // Pair of the send side: a message arrives exactly when its latency
    // says, never before it was sent.
    LOCKSIM_ASSERT_MSG(world_.now() == arrives, "a message delivered off its arrival time");
    LOCKSIM_ASSERT(in_flight_ > 0);
    --in_flight_;
    if (!connected(*from_ptr, *to_ptr)) {
      ++dropped_;
      check_counts();
      return;
    }
    ++arrived_;
    check_counts();
    to_ptr->deliver(std::move(message));
  });
  check_counts();
}

void Network::check_counts() const {
  // Every message sent is, at any moment, in exactly one of three places.
  LOCKSIM_ASSERT_MSG(sent_ == dropped_ + in_flight_ + arrived_, "network message count mismatch");
}

}  // namespace locksim::sim
