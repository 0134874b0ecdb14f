#include "faults/nemesis.h"

#include <algorithm>

#include "env/assert.h"
#include "env/parse.h"

namespace locksim::faults {

Nemesis::Nemesis(sim::World& world, sim::Network& net, std::map<std::string, sim::Node*> nodes,
                 HolderLookup holder, StepSink sink)
    : world_(world),
      net_(net),
      nodes_(std::move(nodes)),
      holder_(std::move(holder)),
      sink_(std::move(sink)) {}

std::string Nemesis::resolve(const std::string& name) const {
  if (name != kHolder) return name;
  return holder_ ? holder_() : std::string();
}

sim::Node& Nemesis::node(const std::string& name) {
  const auto it = nodes_.find(name);
  // install() checked every name, and resolve() yields only known clients.
  LOCKSIM_ASSERT_MSG(it != nodes_.end() && it->second != nullptr, "a fault names a known node");
  return *it->second;
}

void Nemesis::report(std::string_view f, std::vector<std::string> value, std::string_view note) {
  LOCKSIM_ASSERT(!f.empty());
  if (sink_) sink_(f, std::move(value), note);
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
    // Recorded as its own keyword, not as the fault's: a reader that draws a
    // :pause must be able to trust that something was paused.
    std::vector<std::string> value = event.value();
    value.insert(value.begin(), to_string(event.kind));
    report("skip", std::move(value), "nobody holds the lock");
    return;
  }
  const char* const f = to_string(e.kind);
  switch (e.kind) {
    case FaultKind::kPause: {
      sim::Node& n = node(e.node);
      report(f, e.value());
      n.pause();
      world_.after(e.duration, [this, &n] {
        report("resume", {n.name()});
        n.resume();
      });
      return;
    }
    case FaultKind::kSetDrift:
      report(f, e.value());
      node(e.node).clock().set_drift(world_.now(), e.drift_ppm);
      return;
    case FaultKind::kJumpClock:
      report(f, e.value());
      node(e.node).clock().jump(world_.now(), e.jump);
      return;
    case FaultKind::kCrash: {
      sim::Node& n = node(e.node);
      report(f, e.value());
      n.crash();
      if (e.duration > Duration::zero()) {
        world_.after(e.duration, [this, &n] {
          report("restart", {n.name()});
          n.restart();
        });
      }
      return;
    }
    case FaultKind::kPartition: {
      std::vector<const sim::Node*> a, b;
      for (const auto& name : e.side_a) a.push_back(&node(name));
      for (const auto& name : e.side_b) b.push_back(&node(name));
      report(f, e.value());
      net_.partition(a, b);
      if (e.duration > Duration::zero()) {
        world_.after(e.duration, [this] {
          report("heal", {});
          net_.heal();
        });
      }
      return;
    }
    case FaultKind::kHeal:
      report(f, e.value());
      net_.heal();
      return;
  }
}

}  // namespace locksim::faults
