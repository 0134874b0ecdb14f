#include "faults/nemesis.h"

#include <algorithm>
#include <cstdint>
#include <optional>

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
  if (name == kHolder) {
    std::string holder = holder_ ? holder_() : std::string();
    // At a grant (grantee_ is set only while a grant's fault fires) the
    // client granted may not have its reply yet: it is the one to name.
    return holder.empty() ? grantee_ : holder;
  }
  if (name == kPrimary) return primary_ ? primary_() : std::string();
  if (name == kGrantee) return grantee_;
  return name;
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

namespace {

// What parses but means nothing or cannot run: a clock stepped past what
// its nanoseconds hold, a pause of nothing, a node cut off from itself.
// `jumps_total` sums the schedule's clock steps so far.
void check_meaning(const FaultEvent& e, const std::string& field, Duration& jumps_total) {
  // Clock steps add up on one clock; past about 292 years of nanoseconds it
  // would overflow (eight +999999999s jumps did, and broke an invariant).
  constexpr Duration kJumpsTotalMax = Duration::seconds(int64_t{100} * 365 * 24 * 3600);
  if (e.kind == FaultKind::kJumpClock) {
    jumps_total = jumps_total + (e.jump < Duration::zero() ? -e.jump : e.jump);
    if (jumps_total > kJumpsTotalMax) {
      throw ConfigError(field + ": expected clock jumps that add up to at most 100 years " +
                        "(876000h), so no clock overflows");
    }
  }
  if (e.kind == FaultKind::kPause && e.duration == Duration::zero()) {
    throw ConfigError(field + ": expected a pause with a positive duration");
  }
  for (const auto& n : e.side_a) {
    if (std::find(e.side_b.begin(), e.side_b.end(), n) != e.side_b.end()) {
      throw ConfigError(field + ": '" + n + "' is on both sides; expected two disjoint sides");
    }
  }
}

}  // namespace

void Nemesis::install(const FaultSchedule& schedule, const std::string& field_prefix) {
  std::string known;
  for (const auto& [name, n] : nodes_) known += (known.empty() ? "" : ", ") + name;
  Duration jumps_total = Duration::zero();  // see check_meaning
  for (size_t i = 0; i < schedule.events.size(); ++i) {
    const FaultEvent& e = schedule.events[i];
    const std::string field = field_prefix + "[" + std::to_string(i) + "]";
    auto check = [&](const std::string& name) {
      if (name == kHolder && holder_) return;
      if (name == kPrimary && primary_) return;
      if (name == kGrantee && grant_watch_) return;
      if (nodes_.count(name) == 0) {
        throw ConfigError(field + ": no node named '" + name + "' (nodes: " + known + ")");
      }
    };
    if (e.at < Duration::zero()) throw ConfigError(field + ": expected a time >= 0");
    if (e.duration < Duration::zero()) throw ConfigError(field + ": expected a duration >= 0");
    if (e.after_grant && (!grant_watch_ || *e.after_grant < Duration::zero())) {
      throw ConfigError(field + (grant_watch_ ? ": expected 'on grant+D' with D >= 0"
                                              : ": 'on grant' needs a run that watches the lock"));
    }
    if (e.kind == FaultKind::kPartition || e.kind == FaultKind::kDelay ||
        e.kind == FaultKind::kLoss) {
      for (const auto& n : e.side_a) check(n);
      for (const auto& n : e.side_b) check(n);
    } else if (e.kind != FaultKind::kHeal) {
      check(e.node);
    }
    if (e.kind == FaultKind::kHang && !names_client(e.node)) {
      throw ConfigError(field + ": expected a client to hang (cN, @holder or @grantee), got '" +
                        e.node + "': a server has no work of its own to stop");
    }
    if (e.kind == FaultKind::kDelay &&
        (e.duration <= Duration::zero() || e.delay <= Duration::zero())) {
      throw ConfigError(field + ": expected a delay with a positive duration and amount");
    }
    if (e.kind == FaultKind::kLoss && !(e.loss_probability >= 0.0 && e.loss_probability <= 1.0)) {
      throw ConfigError(field + ": expected a loss rate from 0 to 1");
    }
    if (e.kind == FaultKind::kSetDrift && (e.drift_ppm <= -1'000'000 || e.drift_ppm >= 1'000'000)) {
      throw ConfigError(field + ": expected drift_ppm in (-1000000, 1000000)");
    }
    check_meaning(e, field, jumps_total);
  }
  for (const FaultEvent& e : schedule.events) {
    world_.at(TimePoint{} + e.at, [this, e] {
      const bool held = e.unless_held && holder_ && !holder_().empty();
      if (e.after_grant && !held) {
        await_grant(e);
      } else {
        apply(e);
      }
    });
  }
}

void Nemesis::await_grant(const FaultEvent& e) {
  LOCKSIM_ASSERT(e.after_grant && grant_watch_);
  const uint64_t id = next_awaiting_++;
  awaiting_.emplace(id, Awaiting{e, false});
  grant_watch_([this, id](std::string grantee) {
    const auto it = awaiting_.find(id);
    // Pair of the emplace above: a watch fires each request once.
    LOCKSIM_ASSERT_MSG(it != awaiting_.end() && !it->second.granted,
                       "a grant fires a waiting fault once");
    it->second.granted = true;
    auto fire = [this, id, grantee] {
      const auto waiting = awaiting_.find(id);
      LOCKSIM_ASSERT(waiting != awaiting_.end() && waiting->second.granted);
      const FaultEvent fault = waiting->second.fault;
      awaiting_.erase(waiting);
      grantee_ = grantee;
      apply(fault);
      grantee_.clear();
    };
    if (*it->second.fault.after_grant == Duration::zero()) {
      fire();
    } else {
      world_.after(*it->second.fault.after_grant, fire);
    }
  });
}

void Nemesis::finish() {
  for (const auto& [id, a] : awaiting_) {
    report_skip(a.fault, a.granted ? "the run ended before grant+D" : "no grant after its time");
  }
  awaiting_.clear();
}

std::string_view Nemesis::unresolved_note(const FaultEvent& e) {
  auto names = [&e](const char* target) {
    return e.node == target || std::count(e.side_a.begin(), e.side_a.end(), target) > 0 ||
           std::count(e.side_b.begin(), e.side_b.end(), target) > 0;
  };
  if (names(kPrimary)) return "no primary to name";
  if (names(kGrantee)) return "the lock's store does not name the client it granted";
  return "nobody holds the lock";
}

void Nemesis::apply(const FaultEvent& event) {
  FaultEvent e = event;
  if (!resolve_targets(e)) {
    report_skip(event, unresolved_note(event));
    return;
  }
  // @holder or @grantee resolved to a node the other side names: a link
  // from a node to itself, which no fault can cut (validation refuses it
  // when named).
  for (const std::string& n : e.side_a) {
    if (std::find(e.side_b.begin(), e.side_b.end(), n) != e.side_b.end()) {
      report_skip(event, n + " is on both sides");
      return;
    }
  }
  const char* const f = to_string(e.kind);
  switch (e.kind) {
    case FaultKind::kPause:
      apply_pause(e);
      return;
    case FaultKind::kSetDrift:
      report(f, e.value());
      node(e.node).clock().set_drift(world_.now(), e.drift_ppm);
      return;
    case FaultKind::kJumpClock:
      report(f, e.value());
      node(e.node).clock().jump(world_.now(), e.jump);
      return;
    case FaultKind::kCrash:
      if (node(e.node).crashed()) {
        // A crash of a node that is down changes nothing, and must not
        // schedule a restart of its own: the earlier crash owns that.
        report_skip(event, "already down");
        return;
      }
      apply_crash(e);
      return;
    case FaultKind::kPartition:
      apply_partition(e);
      return;
    case FaultKind::kDelay:
      apply_delay(e);
      return;
    case FaultKind::kLoss:
      apply_loss(e);
      return;
    case FaultKind::kHeal:
      report(f, e.value());
      net_.heal();
      return;
    case FaultKind::kHang:
      apply_hang(e);
      return;
  }
}

bool Nemesis::names_client(const std::string& name) {
  if (name == kHolder || name == kGrantee) return true;
  // history::client_label's names: "c1", "c2", ...
  return name.size() >= 2 && name[0] == 'c' &&
         std::all_of(name.begin() + 1, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

void Nemesis::apply_hang(const FaultEvent& e) {
  LOCKSIM_ASSERT(e.kind == FaultKind::kHang && e.duration >= Duration::zero());
  sim::Node& n = node(e.node);
  if (n.crashed()) {
    report_skip(e, "down");
    return;
  }
  report(to_string(e.kind), e.value());
  // A node not hung now owes nothing to an earlier hang (a crash ended it).
  if (!n.hung()) hung_until_.erase(n.name());
  n.hang();
  if (e.duration == Duration::zero()) {  // for good: no timed hang ends it
    hung_until_[n.name()] = TimePoint{INT64_MAX};
    return;
  }
  end_after(
      hung_until_, n, e.duration, [&n] { return n.hung(); },
      [this, &n] {
        if (!n.hung()) return;  // a crash ended it
        report("unhang", {n.name()});
        n.unhang();
      });
}

void Nemesis::end_after(std::map<std::string, TimePoint>& until, sim::Node& n, Duration d,
                        std::function<bool()> still_on, std::function<void()> end) {
  TimePoint& u = until[n.name()];
  u = std::max(u, world_.now() + d);
  world_.after(d, [this, &until, &n, still_on = std::move(still_on), end = std::move(end)] {
    const auto it = until.find(n.name());
    if (it == until.end()) {
      // Two faults of one node that end at the same instant: the first end
      // ended it (one step); this one has nothing left to end.
      LOCKSIM_ASSERT_MSG(!still_on(), "a node faulted by the nemesis has an end time");
      return;
    }
    if (world_.now() < it->second) return;  // a later fault of the kind still holds it
    until.erase(it);
    end();
  });
}

bool Nemesis::resolve_targets(FaultEvent& e) const {
  e.node = resolve(e.node);
  for (auto& n : e.side_a) n = resolve(n);
  for (auto& n : e.side_b) n = resolve(n);
  const auto unresolved = [](const std::string& n) { return n.empty(); };
  const bool has_node = e.kind != FaultKind::kPartition && e.kind != FaultKind::kHeal &&
                        e.kind != FaultKind::kDelay && e.kind != FaultKind::kLoss;
  return !((has_node && e.node.empty()) ||
           std::any_of(e.side_a.begin(), e.side_a.end(), unresolved) ||
           std::any_of(e.side_b.begin(), e.side_b.end(), unresolved));
}

void Nemesis::report_skip(const FaultEvent& scheduled, std::string_view note) {
  // Recorded as its own keyword, not as the fault's: a reader that draws a
  // :pause must be able to trust that something was paused.
  std::vector<std::string> value = scheduled.value();
  value.insert(value.begin(), to_string(scheduled.kind));
  report("skip", std::move(value), note);
}

void Nemesis::apply_pause(const FaultEvent& e) {
  LOCKSIM_ASSERT(e.kind == FaultKind::kPause && e.duration >= Duration::zero());
  sim::Node& n = node(e.node);
  // As a hang: a down process has nothing to pause (it was recorded, and
  // its resume, with nothing paused).
  if (n.crashed()) {
    report_skip(e, "down");
    return;
  }
  report(to_string(e.kind), e.value());
  // A node not paused now owes nothing to an earlier pause (a crash ended
  // it): its end time would have held a later pause past its own end.
  if (!n.paused()) paused_until_.erase(n.name());
  n.pause();
  end_after(
      paused_until_, n, e.duration, [&n] { return n.paused(); },
      [this, &n] {
        if (!n.paused()) return;  // a crash ended it
        report("resume", {n.name()});
        n.resume();
      });
}

void Nemesis::apply_crash(const FaultEvent& e) {
  sim::Node& n = node(e.node);
  // Pair of apply(), which skips a crash of a node that is down.
  LOCKSIM_ASSERT(e.kind == FaultKind::kCrash && !n.crashed());
  report(to_string(e.kind), e.value());
  n.crash();
  if (e.duration > Duration::zero()) {
    world_.after(e.duration, [this, &n] {
      report("restart", {n.name()});
      n.restart();
    });
  }
}

std::vector<const sim::Node*> Nemesis::nodes_of(const std::vector<std::string>& names) {
  std::vector<const sim::Node*> out;
  for (const auto& name : names) out.push_back(&node(name));
  return out;
}

void Nemesis::apply_partition(const FaultEvent& e) {
  LOCKSIM_ASSERT(e.kind == FaultKind::kPartition);
  const auto a = nodes_of(e.side_a);
  const auto b = nodes_of(e.side_b);
  report(to_string(e.kind), e.value());
  const sim::Network::CutId cut = e.one_way ? net_.partition_one_way(a, b) : net_.partition(a, b);
  if (e.duration > Duration::zero()) {
    FaultEvent sides = e;
    sides.duration = Duration::zero();
    world_.after(e.duration, [this, cut, sides] {
      // Only this partition's links: another one that overlaps it keeps its own.
      report("heal", sides.value());
      net_.restore(cut);
    });
  }
}

void Nemesis::apply_delay(const FaultEvent& e) {
  // parse_fault and install() guarantee a spike with a length.
  LOCKSIM_ASSERT(e.kind == FaultKind::kDelay && e.duration > Duration::zero());
  const auto a = nodes_of(e.side_a);
  const auto b = nodes_of(e.side_b);
  report(to_string(e.kind), e.value());
  net_.add_delay(a, b, e.delay);
  world_.after(e.duration, [this, e, a, b] {
    report(to_string(e.kind), {e.value()[0], e.value()[1]});
    net_.remove_delay(a, b, e.delay);
  });
}

void Nemesis::apply_loss(const FaultEvent& e) {
  LOCKSIM_ASSERT(e.kind == FaultKind::kLoss && e.loss_probability >= 0.0 &&
                 e.loss_probability <= 1.0);
  const auto a = nodes_of(e.side_a);
  const auto b = nodes_of(e.side_b);
  report(to_string(e.kind), e.value());
  const uint64_t fault = next_loss_fault_++;
  for (const sim::Node* x : a) {
    for (const sim::Node* y : b) {
      if (x != y) set_loss_layer(*x, *y, fault, e);
    }
  }
  if (e.duration == Duration::zero()) return;
  world_.after(e.duration, [this, e, a, b, fault] {
    // The rate each pair has after the end: one record when they agree; else
    // one a pair, as an overlapping loss of some of the pairs leaves them
    // (one record of the first pair's rate said the others had it too).
    std::vector<std::pair<std::pair<const sim::Node*, const sim::Node*>, double>> rates;
    for (const sim::Node* x : a) {
      for (const sim::Node* y : b) {
        if (x != y) rates.push_back({{x, y}, end_loss_layer(*x, *y, fault)});
      }
    }
    const bool agree = std::all_of(rates.begin(), rates.end(), [&rates](const auto& r) {
      return r.second == rates.front().second;
    });
    FaultEvent end = e;
    end.duration = Duration::zero();
    if (agree) {
      end.loss_probability = rates.empty() ? 0.0 : rates.front().second;
      report(to_string(e.kind), end.value());
      return;
    }
    for (const auto& [pair, rate] : rates) {
      end.side_a = {pair.first->name()};
      end.side_b = {pair.second->name()};
      end.loss_probability = rate;
      report(to_string(e.kind), end.value());
    }
  });
}

void Nemesis::set_loss_layer(const sim::Node& x, const sim::Node& y, uint64_t fault,
                             const FaultEvent& e) {
  const auto key = std::minmax(x.name(), y.name());
  const auto [it, fresh] = loss_.try_emplace({key.first, key.second});
  LossLayers& layers = it->second;
  if (fresh) layers.base_probability = net_.loss_probability(x, y);
  if (e.duration > Duration::zero()) {
    layers.active.emplace_back(fault, e.loss_probability);
  } else {
    // An untimed loss sets the rate for good: no earlier fault's end may undo it.
    layers.base_probability = e.loss_probability;
    layers.active.clear();
  }
  net_.set_loss_probability(x, y, layers.effective());
  LOCKSIM_ASSERT(net_.loss_probability(x, y) == e.loss_probability);
}

double Nemesis::end_loss_layer(const sim::Node& x, const sim::Node& y, uint64_t fault) {
  const auto key = std::minmax(x.name(), y.name());
  const auto it = loss_.find({key.first, key.second});
  // Pair of set_loss_layer(): a timed loss left its pairs in the map.
  LOCKSIM_ASSERT_MSG(it != loss_.end(), "a loss's end finds its pair");
  auto& active = it->second.active;
  std::erase_if(active, [fault](const auto& layer) { return layer.first == fault; });
  net_.set_loss_probability(x, y, it->second.effective());
  return it->second.effective();
}

}  // namespace locksim::faults
