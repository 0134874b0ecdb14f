#include "faults/nemesis.h"

#include <algorithm>

#include "env/parse.h"

namespace locksim::faults {

Nemesis::Nemesis(sim::World& world, sim::Network& net, std::map<std::string, sim::Node*> nodes,
                 HolderLookup holder)
    : world_(world), net_(net), nodes_(std::move(nodes)), holder_(std::move(holder)) {}

std::string Nemesis::resolve(const std::string& name) const {
  if (name != kHolder) return name;
  return holder_ ? holder_() : std::string();
}

sim::Node& Nemesis::node(const std::string& name) {
  return *nodes_.at(name);
}

void Nemesis::note(std::string what) {
  log_.push_back({world_.now(), std::move(what)});
}

void Nemesis::install(const FaultSchedule& schedule, const std::string& field_prefix) {
  std::string known;
  for (const auto& [name, n] : nodes_) known += (known.empty() ? "" : ", ") + name;
  for (size_t i = 0; i < schedule.events.size(); ++i) {
    const FaultEvent& e = schedule.events[i];
    const std::string field = field_prefix + "[" + std::to_string(i) + "]";
    auto check = [&](const std::string& name) {
      if (name == kHolder && holder_) return;
      if (nodes_.count(name) == 0) {
        throw ConfigError(field + ": no node named '" + name + "' (nodes: " + known + ")");
      }
    };
    if (e.at < Duration::zero()) throw ConfigError(field + ": expected a time >= 0");
    if (e.duration < Duration::zero()) throw ConfigError(field + ": expected a duration >= 0");
    if (e.kind == FaultKind::kPartition) {
      for (const auto& n : e.side_a) check(n);
      for (const auto& n : e.side_b) check(n);
    } else if (e.kind != FaultKind::kHeal) {
      check(e.node);
    }
    if (e.kind == FaultKind::kSetDrift && (e.drift_ppm <= -1'000'000 || e.drift_ppm >= 1'000'000)) {
      throw ConfigError(field + ": expected drift_ppm in (-1000000, 1000000)");
    }
  }
  for (const FaultEvent& e : schedule.events) {
    world_.at(TimePoint{} + e.at, [this, e] { apply(e); });
  }
}

void Nemesis::apply(const FaultEvent& event) {
  FaultEvent e = event;
  e.node = resolve(e.node);
  for (auto& n : e.side_a) n = resolve(n);
  for (auto& n : e.side_b) n = resolve(n);
  const auto unresolved = [](const std::string& n) { return n.empty(); };
  if ((e.kind != FaultKind::kPartition && e.kind != FaultKind::kHeal && e.node.empty()) ||
      std::any_of(e.side_a.begin(), e.side_a.end(), unresolved) ||
      std::any_of(e.side_b.begin(), e.side_b.end(), unresolved)) {
    note("skipped (nobody holds the lock): " + event.describe());
    return;
  }
  switch (e.kind) {
    case FaultKind::kPause: {
      sim::Node& n = node(e.node);
      n.pause();
      note("pause " + e.node + " for " + format_duration(e.duration));
      world_.after(e.duration, [this, &n] {
        n.resume();
        note("resume " + n.name());
      });
      return;
    }
    case FaultKind::kSetDrift:
      node(e.node).clock().set_drift(world_.now(), e.drift_ppm);
      note(e.describe());
      return;
    case FaultKind::kJumpClock:
      node(e.node).clock().jump(world_.now(), e.jump);
      note(e.describe());
      return;
    case FaultKind::kCrash: {
      sim::Node& n = node(e.node);
      n.crash();
      note("crash " + e.node);
      if (e.duration > Duration::zero()) {
        world_.after(e.duration, [this, &n] {
          n.restart();
          note("restart " + n.name());
        });
      }
      return;
    }
    case FaultKind::kPartition: {
      std::vector<const sim::Node*> a, b;
      for (const auto& name : e.side_a) a.push_back(&node(name));
      for (const auto& name : e.side_b) b.push_back(&node(name));
      net_.partition(a, b);
      note(e.describe());
      if (e.duration > Duration::zero()) {
        world_.after(e.duration, [this] {
          net_.heal();
          note("heal");
        });
      }
      return;
    }
    case FaultKind::kHeal:
      net_.heal();
      note("heal");
      return;
  }
}

}  // namespace locksim::faults
