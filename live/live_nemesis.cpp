#include "live/live_nemesis.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <queue>
#include <thread>

#include "env/assert.h"
#include "env/parse.h"
#include "faults/nemesis.h"
#include "history/history.h"

namespace locksim::live {

namespace {

using faults::FaultEvent;
using faults::FaultKind;

// The targets a schedule names by role, as the simulated nemesis reads them.
constexpr const char* kHolder = faults::Nemesis::kHolder;
constexpr const char* kPrimary = faults::Nemesis::kPrimary;
// How often the nemesis looks at the clock while it waits for a step or for
// the run's end: the resolution of a live fault's time.
constexpr auto kTick = std::chrono::milliseconds(1);

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

bool is_link_fault(FaultKind k) {
  return k == FaultKind::kPartition || k == FaultKind::kHeal || k == FaultKind::kDelay;
}

// One step the nemesis takes at `at`: a fault's start, or its end.
struct Step {
  Duration at;
  int64_t seq = 0;  // ties in the order the steps were scheduled
  std::function<void()> act;
  bool operator>(const Step& o) const { return at != o.at ? at > o.at : seq > o.seq; }
};

// The live twin of faults::Nemesis's bookkeeping: who is paused or down
// until when, and how many faults cut or delay each relay's directions, so
// a timed fault ends only itself.
class Applier {
 public:
  Applier(const LiveTargets& targets, LiveRunView& view) : t_(targets), view_(view) {}

  void schedule(Duration at, std::function<void()> act) {
    steps_.push({at, next_seq_++, std::move(act)});
  }
  bool empty() const { return steps_.empty(); }
  Duration next_at() const { return steps_.top().at; }
  void take_next() {
    Step s = steps_.top();
    steps_.pop();
    s.act();
  }

  void start(const FaultEvent& scheduled, Duration at);
  void end_everything();
  // The run is over: every client is abandoned where it stands,
  // unrecorded, as the simulation cancels them all at the run's end. A
  // paused or hung client stops now rather than at its fault's end (the
  // runner refuses to record anything after the end anyway).
  void abandon_clients() {
    for (const auto& [client, controls] : t_.client_controls) controls.abandon();
    hung_until_.clear();
  }

 private:
  struct LinkCounts {
    int cut_to_server = 0;
    int cut_to_client = 0;
    int delays = 0;
    Duration delay = Duration::zero();
  };
  struct Cut {
    TcpRelay* relay;
    bool to_server;
    bool to_client;
  };

  std::string resolve(const std::string& name) const {
    if (name == kHolder) return view_.holder();
    if (name == kPrimary && t_.primary) return t_.primary();
    if (name == kPrimary) return t_.servers.empty() ? "" : t_.servers.begin()->first;
    return name;
  }
  bool resolve_targets(FaultEvent& e) const;
  const LiveTargets::Server& server_or_client(const std::string& node) const {
    const auto it = t_.servers.find(node);
    return it != t_.servers.end() ? it->second : t_.client_controls.at(node);
  }
  void skip(const FaultEvent& scheduled, std::string_view note) {
    std::vector<std::string> value = scheduled.value();
    value.insert(value.begin(), faults::to_string(scheduled.kind));
    view_.record_nemesis("skip", std::move(value), note);
  }
  std::vector<Cut> cuts_between(const FaultEvent& e) const;
  void apply_cuts(const std::vector<Cut>& cuts, int sign);
  void apply_delays(const std::vector<Cut>& cuts, int sign, Duration by);
  void pause(const FaultEvent& e, Duration at);
  void hang(const FaultEvent& e, Duration at);
  void crash(const FaultEvent& scheduled, const FaultEvent& e, Duration at);
  void partition(const FaultEvent& e, Duration at);
  void delay(const FaultEvent& e, Duration at);

  const LiveTargets& t_;
  LiveRunView& view_;
  std::priority_queue<Step, std::vector<Step>, std::greater<Step>> steps_;
  int64_t next_seq_ = 0;
  std::map<TcpRelay*, LinkCounts> links_;
  uint64_t heals_ = 0;  // global heals so far: a timed cut's end after one undoes nothing
  std::map<std::string, Duration> paused_until_;
  std::map<std::string, Duration> hung_until_;  // Duration::max(): for good
  std::map<std::string, Duration> down_until_;  // Duration::max(): for good
};

bool Applier::resolve_targets(FaultEvent& e) const {
  e.node = resolve(e.node);
  for (auto& n : e.side_a) n = resolve(n);
  for (auto& n : e.side_b) n = resolve(n);
  auto unresolved = [](const std::string& n) { return n.empty(); };
  return !((!is_link_fault(e.kind) && e.node.empty()) ||
           std::any_of(e.side_a.begin(), e.side_a.end(), unresolved) ||
           std::any_of(e.side_b.begin(), e.side_b.end(), unresolved));
}

void Applier::start(const FaultEvent& scheduled, Duration at) {
  FaultEvent e = scheduled;
  if (!resolve_targets(e)) {
    skip(scheduled, e.node == "" && scheduled.node == kPrimary ? "no primary to name"
                                                               : "nobody holds the lock");
    return;
  }
  switch (e.kind) {
    case FaultKind::kPause:
      pause(e, at);
      return;
    case FaultKind::kHang:
      hang(e, at);
      return;
    case FaultKind::kCrash:
      crash(scheduled, e, at);
      return;
    case FaultKind::kPartition:
      partition(e, at);
      return;
    case FaultKind::kDelay:
      delay(e, at);
      return;
    case FaultKind::kJumpClock:
      view_.record_nemesis("jump", e.value(), "");
      server_or_client(e.node).jump(e.jump);
      return;
    case FaultKind::kSetDrift:
      view_.record_nemesis("drift", e.value(), "");
      server_or_client(e.node).set_drift(e.drift_ppm);
      return;
    case FaultKind::kHeal:
      view_.record_nemesis("heal", {}, "");
      ++heals_;
      for (auto& [relay, counts] : links_) {
        counts.cut_to_server = counts.cut_to_client = 0;
        relay->heal();
      }
      return;
    default:
      LOCKSIM_ASSERT_MSG(false, "check_live_faults refuses the other kinds");
  }
}

void Applier::pause(const FaultEvent& e, Duration at) {
  const LiveTargets::Server& server = server_or_client(e.node);
  view_.record_nemesis("pause", e.value(), "");
  server.pause();
  // A server paused twice resumes when the later pause ends (one step).
  Duration& until = paused_until_[e.node];
  until = std::max(until, at + e.duration);
  schedule(at + e.duration, [this, node = e.node, end = at + e.duration] {
    const auto it = paused_until_.find(node);
    if (it == paused_until_.end() || it->second > end) return;
    paused_until_.erase(it);
    view_.record_nemesis("resume", {node}, "");
    server_or_client(node).resume();
  });
}

void Applier::hang(const FaultEvent& e, Duration at) {
  if (down_until_.count(e.node) != 0) {
    skip(e, "down");
    return;
  }
  const LiveTargets::Server& client = t_.client_controls.at(e.node);
  view_.record_nemesis("hang", e.value(), "");
  client.hang();
  // As a pause: a later hang ends with the later end; none ends one for good.
  Duration& until = hung_until_[e.node];
  until = e.duration == Duration::zero() ? Duration::max() : std::max(until, at + e.duration);
  if (e.duration == Duration::zero()) return;
  schedule(at + e.duration, [this, node = e.node, end = at + e.duration] {
    const auto it = hung_until_.find(node);
    if (it == hung_until_.end() || it->second > end) return;  // a later hang, or a crash
    hung_until_.erase(it);
    view_.record_nemesis("unhang", {node}, "");
    t_.client_controls.at(node).unhang();
  });
}

void Applier::crash(const FaultEvent& scheduled, const FaultEvent& e, Duration at) {
  if (down_until_.count(e.node) != 0) {
    skip(scheduled, "already down");  // the earlier crash owns the restart
    return;
  }
  const LiveTargets::Server& node = server_or_client(e.node);
  const bool client = t_.client_controls.count(e.node) != 0;
  // A paused server is killed as it is; its pause has nothing left to end.
  // A paused client is let go first: its next life must not start frozen.
  if (paused_until_.erase(e.node) != 0 && client) node.resume();
  // A crash ends a hang (the simulation's rule): the next life works.
  if (hung_until_.erase(e.node) != 0) node.unhang();
  view_.record_nemesis("crash", e.value(), "");
  node.crash();
  if (client) view_.client_crashed(e.node);
  if (e.duration == Duration::zero()) {
    down_until_[e.node] = Duration::max();
    return;
  }
  down_until_[e.node] = at + e.duration;
  schedule(at + e.duration, [this, node = e.node] {
    down_until_.erase(node);
    view_.record_nemesis("restart", {node}, "");
    server_or_client(node).restart();
  });
}

std::vector<Applier::Cut> Applier::cuts_between(const FaultEvent& e) const {
  std::vector<Cut> out;
  for (const std::string& a : e.side_a) {
    for (const std::string& b : e.side_b) {
      // a -> b is cut; both ways unless one_way.
      if (const auto it = t_.links.find({a, b}); it != t_.links.end()) {
        out.push_back({it->second, true, !e.one_way});  // a client, b a server
      } else if (const auto back = t_.links.find({b, a}); back != t_.links.end()) {
        out.push_back({back->second, !e.one_way, true});  // a a server, b a client
      }
    }
  }
  return out;
}

void Applier::apply_cuts(const std::vector<Cut>& cuts, int sign) {
  for (const Cut& c : cuts) {
    LinkCounts& n = links_[c.relay];
    n.cut_to_server += c.to_server ? sign : 0;
    n.cut_to_client += c.to_client ? sign : 0;
    LOCKSIM_ASSERT(n.cut_to_server >= 0 && n.cut_to_client >= 0);
    c.relay->cut(n.cut_to_server > 0, n.cut_to_client > 0);
  }
}

void Applier::partition(const FaultEvent& e, Duration at) {
  view_.record_nemesis("partition", e.value(), "");
  const std::vector<Cut> cuts = cuts_between(e);
  apply_cuts(cuts, +1);
  if (e.duration == Duration::zero()) return;  // until a heal
  const uint64_t heals_before = heals_;
  FaultEvent sides = e;  // the partition's own sides, one-way as it was ("a->b")
  sides.duration = Duration::zero();
  schedule(at + e.duration, [this, cuts, sides, heals_before] {
    view_.record_nemesis("heal", sides.value(), "");
    if (heals_ == heals_before) apply_cuts(cuts, -1);  // a heal already undid it
  });
}

void Applier::apply_delays(const std::vector<Cut>& cuts, int sign, Duration by) {
  for (const Cut& c : cuts) {
    LinkCounts& n = links_[c.relay];
    n.delays += sign;
    LOCKSIM_ASSERT(n.delays >= 0);
    // The latest delay holds while any does (the simulation adds one spike
    // at a time; overlapping spikes on one link are not in any scenario).
    if (sign > 0) n.delay = by;
    if (n.delays == 0) n.delay = Duration::zero();
    c.relay->set_delay(std::chrono::milliseconds(n.delay.to_ms()));
  }
}

void Applier::delay(const FaultEvent& e, Duration at) {
  view_.record_nemesis("delay", e.value(), "");
  FaultEvent both = e;
  both.one_way = false;
  const std::vector<Cut> links = cuts_between(both);
  apply_delays(links, +1, e.delay);
  schedule(at + e.duration, [this, links, e] {
    view_.record_nemesis("delay", {join(e.side_a), join(e.side_b)}, "");
    apply_delays(links, -1, e.delay);
  });
}

void Applier::end_everything() {
  for (const auto& [node, until] : paused_until_) server_or_client(node).resume();
  paused_until_.clear();
  for (const auto& [node, until] : hung_until_) t_.client_controls.at(node).unhang();
  hung_until_.clear();
  for (auto& [relay, counts] : links_) {
    relay->heal();
    relay->set_delay(std::chrono::milliseconds(0));
  }
}

// Whether a link between servers `a` and `b` (either way) exists live: a
// replica's replication link, a Sentinel's link; @primary may be any server.
bool server_link_exists(const std::string& a, const std::string& b,
                        const std::vector<std::pair<std::string, std::string>>& links) {
  return std::any_of(links.begin(), links.end(), [&](const auto& l) {
    auto matches = [](const std::string& name, const std::string& end) {
      return name == end || (name == kPrimary && end != "sentinel");
    };
    return (matches(a, l.first) && matches(b, l.second)) ||
           (matches(a, l.second) && matches(b, l.first));
  });
}

std::string live_refusal(const FaultEvent& e, const std::vector<std::string>& clients,
                         const std::vector<std::string>& servers,
                         const std::vector<std::pair<std::string, std::string>>& server_links) {
  auto is = [](const std::vector<std::string>& names, const std::string& n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  auto server_or_primary = [&](const std::string& n) { return n == kPrimary || is(servers, n); };
  auto client_or_holder = [&](const std::string& n) { return n == kHolder || is(clients, n); };
  if (e.after_grant) return "a fault that waits for a grant ('on grant') is simulation-only";
  switch (e.kind) {
    case FaultKind::kPause:
      if (server_or_primary(e.node) || client_or_holder(e.node)) return "";
      return "no node named '" + e.node + "'";
    case FaultKind::kCrash:
      if (server_or_primary(e.node) || client_or_holder(e.node)) return "";
      return "no node named '" + e.node + "'";
    case FaultKind::kPartition:
    case FaultKind::kDelay:
      for (const auto* side : {&e.side_a, &e.side_b}) {
        for (const std::string& n : *side) {
          if (!server_or_primary(n) && !client_or_holder(n)) return "no node named '" + n + "'";
        }
      }
      // Client-server links, and the servers' own (replication, Sentinel).
      for (const std::string& a : e.side_a) {
        for (const std::string& b : e.side_b) {
          const bool clients_only = client_or_holder(a) && client_or_holder(b);
          if (clients_only || (!client_or_holder(a) && !client_or_holder(b) &&
                               !server_link_exists(a, b, server_links))) {
            return "a link between '" + a + "' and '" + b +
                   "' does not exist live (clients talk only to servers; servers to their "
                   "replicas and to Sentinel)";
          }
        }
      }
      return "";
    case FaultKind::kHeal:
      return "";
    case FaultKind::kSetDrift:
    case FaultKind::kJumpClock:
      if (server_or_primary(e.node) || client_or_holder(e.node)) return "";
      return "no node named '" + e.node + "'";
    case FaultKind::kLoss:
      return "loss is simulation-only for now";
    case FaultKind::kHang:
      if (client_or_holder(e.node)) return "";
      return "no client named '" + e.node + "'";
  }
  return "unknown fault kind";
}

}  // namespace

void check_live_faults(const faults::FaultSchedule& schedule,
                       const std::vector<std::string>& clients,
                       const std::vector<std::string>& servers, const std::string& field_prefix,
                       const std::vector<std::pair<std::string, std::string>>& server_links) {
  for (size_t i = 0; i < schedule.events.size(); ++i) {
    const std::string why = live_refusal(schedule.events[i], clients, servers, server_links);
    if (!why.empty()) {
      throw ConfigError(field_prefix + "[" + std::to_string(i) + "]: '" +
                        schedule.events[i].describe() + "' cannot run live: " + why);
    }
  }
}

void run_live_nemesis(const faults::FaultSchedule& schedule, const LiveTargets& targets,
                      LiveRunView& view, const std::atomic<bool>& done) {
  Applier applier(targets, view);
  for (const FaultEvent& e : schedule.events) {
    applier.schedule(e.at, [&applier, &e] { applier.start(e, e.at); });
  }
  auto take_next = [&applier, &view] {
    try {
      applier.take_next();
    } catch (const std::exception& e) {
      view.nemesis_error(e.what());
    }
  };
  // The steps at 0 s before any client's first step: in the simulation the
  // nemesis's timers at 0 fire before the clients' first events, so a
  // partition at 0 s holds a client's very first request, and a client's
  // clock jumped at 0 s is wrong from its first read.
  while (!applier.empty() && applier.next_at() <= Duration::zero()) take_next();
  view.nemesis_ready();
  // Bounded by the schedule: every start schedules at most one end.
  bool released = false;
  while (!done.load()) {
    if (!released && view.stopping()) {
      // Every fault ends now, not at its scheduled end: a client blocked
      // with no timeout on a paused server or a cut link returns now (a 3 s
      // run under a 60 s pause lasted 60 s), and nothing after the run's
      // end is recorded anyway.
      applier.abandon_clients();
      applier.end_everything();
      released = true;
    }
    if (!released && !applier.empty() && view.elapsed() >= applier.next_at()) {
      take_next();
      continue;
    }
    std::this_thread::sleep_for(kTick);
  }
  applier.end_everything();
}

std::vector<std::string> live_client_names(int clients) {
  std::vector<std::string> out;
  for (int i = 0; i < clients; ++i) out.push_back(history::client_label(i));
  return out;
}

bool needs_clock_shim(const faults::FaultSchedule& schedule,
                      const std::vector<std::string>& servers) {
  return std::any_of(schedule.events.begin(), schedule.events.end(), [&](const FaultEvent& e) {
    const bool server =
        e.node == kPrimary || std::find(servers.begin(), servers.end(), e.node) != servers.end();
    return (e.kind == FaultKind::kJumpClock || e.kind == FaultKind::kSetDrift) && server;
  });
}

bool needs_relays(const faults::FaultSchedule& schedule) {
  return std::any_of(schedule.events.begin(), schedule.events.end(),
                     [](const FaultEvent& e) { return is_link_fault(e.kind); });
}

}  // namespace locksim::live
