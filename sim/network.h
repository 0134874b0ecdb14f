// The simulated network: per-link latency, loss, and partitions.
//
// A message is a callback run at its destination node when it arrives. It is
// dropped if the link is cut when it is sent or when it would arrive (a
// partition that heals in between does not resurrect it), or by a seeded loss
// draw. Latency is base + exponential(jitter_mean) per message, so messages on
// one link can overtake each other, as datagrams on separate connections do.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "env/time.h"
#include "sim/rng.h"

namespace locksim::sim {

class Node;
class World;

struct LinkParams {
  Duration latency_base = Duration::micros(200);
  Duration latency_jitter_mean = Duration::micros(300);
  double loss = 0.0;  // probability a message is dropped, in [0, 1]
};

class Network {
 public:
  Network(World& world, Rng rng);

  // Link parameters must be in range (latencies >= 0, loss in [0, 1]):
  // validation of the run's input guarantees it.
  void set_default_link(const LinkParams& p);
  // Both directions between the two distinct nodes.
  void set_link(const Node& a, const Node& b, const LinkParams& p);

  // Cuts every link between a node in `side_a` and one in `side_b`.
  void partition(const std::vector<const Node*>& side_a, const std::vector<const Node*>& side_b);
  // Restores every cut link.
  void heal();
  bool connected(const Node& a, const Node& b) const;

  // Sends `message` from `from` to `to`; it runs via to.deliver() on arrival.
  void send(const Node& from, Node& to, std::function<void()> message);

  // Counts: every message sent is dropped, in flight, or arrived (handed to
  // its node, which may still drop it if crashed). Asserted on every change.
  uint64_t sent() const { return sent_; }
  uint64_t dropped() const { return dropped_; }
  uint64_t in_flight() const { return in_flight_; }
  uint64_t arrived() const { return arrived_; }

 private:
  using Pair = std::pair<std::string, std::string>;  // by name: deterministic order
  static Pair key(const Node& a, const Node& b);
  const LinkParams& link(const Node& a, const Node& b) const;
  void check_counts() const;

  World& world_;
  Rng rng_;
  LinkParams default_link_;
  std::map<Pair, LinkParams> links_;
  std::set<Pair> cut_;
  uint64_t sent_ = 0;
  uint64_t dropped_ = 0;
  uint64_t in_flight_ = 0;
  uint64_t arrived_ = 0;
};

}  // namespace locksim::sim
