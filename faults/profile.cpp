#include "faults/profile.h"

#include <algorithm>
#include <functional>
#include <map>

#include "env/assert.h"
#include "env/parse.h"
#include "faults/network_draw.h"
#include "sim/rng.h"

namespace locksim::faults {

namespace {

// What one part of a profile draws from: its own stream, the deployment, and
// the helpers every generator shares. Durations are whole milliseconds so a
// schedule prints and parses back exactly (FaultEvent::describe()).
class Draw {
 public:
  Draw(uint64_t seed, const std::string& part, const DeploymentView& view)
      : rng_(sim::Rng(seed).split("profile/" + part)),
        aim_(sim::Rng(seed).split("profile/" + part + "/aim")),
        view_(view) {
    LOCKSIM_ASSERT_MSG(!view.clients.empty() && !view.servers.empty(),
                       "a profile needs clients and servers to aim at");
    LOCKSIM_ASSERT(view.run_length > Duration::zero() && view.lease > Duration::zero());
  }

  const DeploymentView& view() const { return view_; }
  // The lease, capped to the run: a fault scaled by a one-year deadline would
  // just last the whole run.
  Duration lease() const { return std::min(view_.lease, view_.run_length); }

  int64_t between(int64_t lo, int64_t hi) { return rng_.between(lo, hi); }
  bool chance(int64_t percent) { return rng_.between(0, 99) < percent; }
  Duration millis(Duration lo, Duration hi) {
    return Duration::millis(rng_.between(lo.to_ms(), std::max(lo.to_ms(), hi.to_ms())));
  }
  // `permille_lo..permille_hi` thousandths of the lease (capped to the run,
  // for faults that last: a pause; uncapped for an instant clock step, which
  // may have to pass a one-year deadline), at least 1 ms.
  Duration of_lease(int64_t permille_lo, int64_t permille_hi, bool capped = true) {
    const int64_t k = rng_.between(permille_lo, permille_hi);
    const int64_t base_ms = (capped ? lease() : view_.lease).to_ms();
    return Duration::millis(std::max<int64_t>(1, base_ms / 1000 * k + base_ms % 1000 * k / 1000));
  }
  // A time between `lo_percent` and `hi_percent` of the run.
  Duration time(int64_t lo_percent, int64_t hi_percent) {
    const int64_t run_ms = view_.run_length.to_ms();
    return Duration::millis(rng_.between(run_ms * lo_percent / 100, run_ms * hi_percent / 100));
  }
  const std::string& pick(const std::vector<std::string>& from) {
    LOCKSIM_ASSERT(!from.empty());
    return from[static_cast<size_t>(rng_.below(from.size()))];
  }
  // A non-empty random subset of `from`, in `from`'s order.
  std::vector<std::string> subset(const std::vector<std::string>& from) {
    std::vector<std::string> out;
    const int64_t percent = between(30, 100);  // this seed's share
    for (const auto& name : from) {
      if (chance(percent)) out.push_back(name);
    }
    if (out.empty()) out.push_back(pick(from));
    return out;
  }
  sim::Rng& rng() { return rng_; }
  // A stream of its own for where a fault is aimed (on a grant), so that
  // aiming a fault never changes the profile's other draws.
  sim::Rng& aim() { return aim_; }
  const std::vector<std::string>& primaries() const {
    return view_.primaries.empty() ? view_.servers : view_.primaries;
  }

 private:
  sim::Rng rng_;
  sim::Rng aim_;
  const DeploymentView& view_;
};

FaultEvent event(FaultKind kind, Duration at, std::string node) {
  FaultEvent e;
  e.kind = kind;
  e.at = at;
  e.node = std::move(node);
  return e;
}

// Drift and steps on `nodes`' clocks: drift up to `drift_ppm_max` either
// way, steps up to `jump_lease_permille` thousandths of the lease either way.
// Most seeds step their clocks together: one bad NTP server feeding several
// machines steps them all by the same amount at once, which is what it takes
// to move a quorum (Redlock) past a lease.
void clock_faults(Draw& d, const std::vector<std::string>& nodes, int64_t drift_ppm_max,
                  int64_t jump_lease_permille, std::vector<FaultEvent>& out) {
  const int64_t share = d.between(30, 100);  // of nodes touched, this seed
  const int64_t drift_max = d.between(0, drift_ppm_max);
  const int64_t jump_permille = d.between(100, jump_lease_permille);
  const int64_t forward_percent = d.between(40, 100);
  const bool together = d.chance(60);
  const Duration step_at = d.time(5, 80);
  // One draw per statement (docs/architecture.md, "Determinism rules"): the
  // operands of `*`, like a call's arguments, are evaluated in an order C++
  // leaves to the compiler, so gcc and clang would draw them the other way round.
  // The sign is drawn first: the order gcc 12 chose, so its histories stay as they were.
  const int64_t common_sign = d.chance(forward_percent) ? 1 : -1;
  const Duration common_size = d.of_lease(jump_permille / 2, jump_permille, false);
  const Duration common_step = common_size * common_sign;
  for (const auto& node : nodes) {
    if (!d.chance(share)) continue;
    if (d.chance(50)) {
      FaultEvent e = event(FaultKind::kSetDrift, d.time(0, 50), node);
      e.drift_ppm = d.between(-drift_max, drift_max);
      out.push_back(e);
    }
    if (together) {
      FaultEvent e = event(FaultKind::kJumpClock, step_at, node);
      e.jump = common_step;
      out.push_back(e);
    } else if (d.chance(70)) {
      FaultEvent e = event(FaultKind::kJumpClock, d.time(5, 80), node);
      const int64_t sign = d.chance(forward_percent) ? 1 : -1;
      const Duration size = d.of_lease(0, jump_permille, false);
      e.jump = size * sign;
      out.push_back(e);
    }
  }
  if (out.empty()) {  // every seed of a clock profile moves at least one clock
    FaultEvent e = event(FaultKind::kJumpClock, step_at, d.pick(nodes));
    e.jump = d.of_lease(100, jump_permille, false);
    out.push_back(e);
  }
}

// Client clocks: drift up to 8 %, steps up to 2 x the lease. With an idle
// lock (a drawn workload), every seed also drifts the clock of whichever
// client holds the lock at a drawn time: a client's clock matters
// to a lock only while that client holds, and with few clients and long
// holds the clients drawn above may never hold again after their fault
// (issue 27: the ZooKeeper cells' coverage fell below the fixed workload's).
// From the aim stream, so every draw above is what it was; the fixed
// workload's schedules stay as they were.
void client_clock(Draw& d, std::vector<FaultEvent>& out) {
  clock_faults(d, d.view().clients, 80'000, 2000, out);
  if (!d.view().idle_lock) return;
  sim::Rng& aim = d.aim();
  const int64_t run_ms = d.view().run_length.to_ms();
  FaultEvent e = event(FaultKind::kSetDrift,
                       Duration::millis(aim.between(run_ms / 20, run_ms * 4 / 5)), "@holder");
  e.drift_ppm = aim.between(-80'000, 80'000);
  out.push_back(e);
}

// Server clocks: drift up to 5 %, steps up to 2 x the lease, both ways.
void server_clock(Draw& d, std::vector<FaultEvent>& out) {
  clock_faults(d, d.view().servers, 50'000, 2000, out);
}

// Process pauses, mostly of the holder, from a tenth of the lease to three
// times it; now and then a server's.
void pause(Draw& d, std::vector<FaultEvent>& out) {
  const int64_t count = d.between(1, 4);
  const int64_t holder_percent = d.between(50, 100);
  for (int64_t i = 0; i < count; ++i) {
    std::string node = d.chance(holder_percent) ? "@holder" : d.pick(d.view().clients);
    if (d.chance(10)) node = d.pick(d.view().servers);
    FaultEvent e = event(FaultKind::kPause, d.time(5, 85), node);
    e.duration = d.of_lease(100, 3000);
    out.push_back(e);
  }
}

// Primaries die and come back later (as replicas, if the backend promoted
// one meanwhile). The first round kills one to all of the deployment's
// primaries within 300 ms of each other; later rounds (two to six more)
// kill whichever server is the primary then ("@primary": the replica the
// last failover promoted), now and then any server.
void failover(Draw& d, std::vector<FaultEvent>& out) {
  std::vector<std::string> left = d.primaries();
  const int64_t count = d.between(1, static_cast<int64_t>(left.size()));
  const Duration at = d.time(5, 30);
  // Half the seeds wait for a grant, then crash within 20-200 ms of it: after
  // its reply has reached the client, before a replica 250 ms or more behind
  // has it.
  const std::optional<Duration> after_grant =
      d.aim().chance(0.5) ? std::optional(Duration::millis(d.aim().between(20, 200)))
                          : std::nullopt;
  for (int64_t i = 0; i < count; ++i) {
    const std::string node = d.pick(left);
    left.erase(std::find(left.begin(), left.end(), node));
    const Duration offset = Duration::millis(d.between(0, 300));
    FaultEvent e = event(FaultKind::kCrash, after_grant ? at : at + offset, node);
    if (after_grant) e.after_grant = *after_grant + offset;
    e.duration = d.millis(Duration::seconds(2), Duration::seconds(4));
    out.push_back(e);
  }
  const int64_t rounds = d.between(2, 6);
  for (int64_t i = 0; i < rounds; ++i) {
    const std::string node = d.chance(75) ? std::string("@primary") : d.pick(d.view().servers);
    FaultEvent e = event(FaultKind::kCrash, d.time(30, 90), node);
    e.duration = d.millis(Duration::seconds(2), Duration::seconds(4));
    out.push_back(e);
  }
}

// Servers crash and restart with what their durability kept: at once (the
// dangerous case without fsync) or after up to twice the lease. Most seeds
// crash a set of servers close together and bring them back together (a
// rack losing power), which is what it takes for a quorum to forget a key
// at once; the others crash one to N+1 servers at independent times.
void crash_restart(Draw& d, std::vector<FaultEvent>& out) {
  const int64_t quick_percent = d.between(20, 80);
  auto restart_after = [&d, quick_percent] {
    return d.chance(quick_percent) ? d.millis(Duration::millis(10), Duration::millis(1000))
                                   : d.of_lease(100, 2000);
  };
  if (d.chance(60)) {
    const Duration at = d.time(5, 80);
    const Duration down = restart_after();
    for (const std::string& node : d.subset(d.view().servers)) {
      FaultEvent e = event(FaultKind::kCrash, at + Duration::millis(d.between(0, 500)), node);
      e.duration = down;
      out.push_back(e);
    }
    return;
  }
  const int64_t count = d.between(1, static_cast<int64_t>(d.view().servers.size()) + 1);
  for (int64_t i = 0; i < count; ++i) {
    // One draw per statement, as above; the server first, as gcc 12 drew them.
    const std::string node = d.pick(d.view().servers);
    const Duration at = d.time(5, 80);
    FaultEvent e = event(FaultKind::kCrash, at, node);
    e.duration = restart_after();
    out.push_back(e);
  }
}

// The NP column: partitions both ways or one way, and delay spikes, between
// clients and all or a minority of the servers, healed before and after the
// lease and (in long runs) past the retransmission limit (see
// faults/network_draw.h); a lone client cut off is the holder in half the
// seeds that pick one. Some seeds also cut one server off from the others (a
// replica falling behind, a primary isolated).
void partition(Draw& d, std::vector<FaultEvent>& out) {
  NetworkDrawInput in;
  in.clients = d.view().clients;
  in.servers = d.view().servers;
  in.run_length = d.view().run_length;
  in.ttl = d.lease();
  in.retransmission_limit = d.view().retransmission_limit;
  const bool aim_at_holder = d.chance(50);
  for (FaultEvent& e : draw_network_faults(d.rng(), in).events) {
    // Half the cuts wait for a grant, so that they hold its reply: a late
    // grant. A cut of the holder then cuts the client granted, where the
    // store names it; elsewhere (GETSET, ZooKeeper) the holder 50 ms after
    // the grant, a fresh holder with its whole hold ahead of it instead of
    // whoever holds at the drawn time, if anyone does.
    const bool at_grant = e.kind == FaultKind::kPartition && d.aim().chance(0.5);
    for (auto* side : {&e.side_a, &e.side_b}) {
      const auto& clients = d.view().clients;
      if (aim_at_holder && side->size() == 1 &&
          std::find(clients.begin(), clients.end(), side->front()) != clients.end()) {
        const bool grantee = at_grant && d.view().grants_name_clients;
        *side = {grantee ? kGranteeTarget : "@holder"};
        if (at_grant) e.after_grant = grantee ? Duration::zero() : Duration::millis(50);
      } else if (at_grant && *side == clients) {
        e.after_grant = Duration::zero();
      }
    }
    // Whole milliseconds, so the schedule prints and reads back exactly.
    e.at = Duration::millis(e.at.to_ms());
    e.duration = Duration::millis(std::max<int64_t>(1, e.duration.to_ms()));
    if (e.kind == FaultKind::kDelay)
      e.delay = Duration::millis(std::max<int64_t>(1, e.delay.to_ms()));
    out.push_back(std::move(e));
  }
  if (d.view().servers.size() > 1 && d.chance(15)) {
    FaultEvent e = event(FaultKind::kPartition, d.time(5, 60), "");
    e.side_a = {d.pick(d.view().servers)};
    for (const auto& s : d.view().servers) {
      if (s != e.side_a.front()) e.side_b.push_back(s);
    }
    e.duration = d.of_lease(200, 3000);
    out.push_back(e);
  }
}

// The holder's process dies mid-section (or another client's, often
// mid-acquire); it restarts after up to the lease, or stays down.
void client_crash(Draw& d, std::vector<FaultEvent>& out) {
  const int64_t count = d.between(1, 3);
  for (int64_t i = 0; i < count; ++i) {
    const std::string node = d.chance(70) ? std::string("@holder") : d.pick(d.view().clients);
    FaultEvent e = event(FaultKind::kCrash, d.time(5, 85), node);
    if (d.chance(80)) e.duration = d.of_lease(10, 1000);
    out.push_back(e);
  }
}

using Generator = std::function<void(Draw&, std::vector<FaultEvent>&)>;

const std::map<std::string, Generator>& generators() {
  static const std::map<std::string, Generator> table = {
      {"none", [](Draw&, std::vector<FaultEvent>&) {}},
      {"client-clock", client_clock},
      {"server-clock", server_clock},
      {"pause", pause},
      {"failover", failover},
      {"crash-restart", crash_restart},
      {"partition", partition},
      {"client-crash", client_crash},
  };
  return table;
}

}  // namespace

const std::vector<std::string>& profile_names() {
  static const std::vector<std::string> names = {"none",      "client-clock", "server-clock",
                                                 "pause",     "failover",     "crash-restart",
                                                 "partition", "client-crash"};
  return names;
}

std::vector<std::string> parse_profile(std::string_view text, std::string_view field) {
  std::vector<std::string> parts;
  if (text.empty()) return parts;
  std::string all;
  for (const auto& n : profile_names()) all += (all.empty() ? "" : ", ") + n;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t plus = std::min(text.find('+', begin), text.size());
    const std::string part(text.substr(begin, plus - begin));
    if (generators().count(part) == 0) {
      throw ConfigError(std::string(field) + ": expected a profile (" + all +
                        ") or several joined by '+', got '" + std::string(text) + "' ('" + part +
                        "' is not one)");
    }
    if (std::find(parts.begin(), parts.end(), part) != parts.end()) {
      throw ConfigError(std::string(field) + ": '" + part + "' appears twice in '" +
                        std::string(text) + "'");
    }
    parts.push_back(part);
    begin = plus + 1;
  }
  if (parts.size() > 1 && std::find(parts.begin(), parts.end(), "none") != parts.end()) {
    throw ConfigError(std::string(field) + ": 'none' cannot be combined, got '" +
                      std::string(text) + "'");
  }
  LOCKSIM_ASSERT(!parts.empty());
  return parts;
}

bool wants_failover(const std::vector<std::string>& parts) {
  return std::find(parts.begin(), parts.end(), "failover") != parts.end();
}

bool must_outlast_lease(const std::vector<std::string>& parts) {
  return std::any_of(parts.begin(), parts.end(),
                     [](const std::string& p) { return p == "pause" || p == "partition"; });
}

Duration profile_drawn_lease(uint64_t seed, Duration longest_hold) {
  LOCKSIM_ASSERT(longest_hold >= Duration::zero());
  sim::Rng rng = sim::Rng(seed).split("profile/lease");
  const int64_t times = rng.between(2, 4);
  const int64_t hold_ms = std::max<int64_t>(longest_hold.to_ms(), 1);
  const int64_t seconds = std::max<int64_t>((hold_ms * times + 999) / 1000, 1);  // rounded up
  const Duration lease = Duration::seconds(seconds);
  LOCKSIM_ASSERT(lease > longest_hold && lease >= Duration::seconds(1));
  return lease;
}

Duration profile_replication_lag(uint64_t seed) {
  static const Duration kLags[] = {Duration::millis(250), Duration::millis(500),
                                   Duration::seconds(1), Duration::seconds(2)};
  sim::Rng rng = sim::Rng(seed).split("profile/failover/replication-lag");
  return kLags[rng.below(std::size(kLags))];
}

Duration profile_min_run(const std::vector<std::string>& parts, Duration lease) {
  LOCKSIM_ASSERT(lease > Duration::zero());
  if (std::find(parts.begin(), parts.end(), "partition") == parts.end()) return Duration::zero();
  return std::min(lease * 4, Duration::seconds(60));
}

std::optional<Duration> profile_client_timeout(const std::vector<std::string>& parts,
                                               uint64_t seed) {
  if (std::find(parts.begin(), parts.end(), "partition") == parts.end()) return std::nullopt;
  sim::Rng rng = sim::Rng(seed).split("profile/partition/client-timeout");
  const Duration timeout = draw_client_timeout(rng);
  LOCKSIM_ASSERT(timeout > Duration::zero());
  return timeout;
}

namespace {

// Every fault of an idle lock's schedule that does not wait for a grant
// already fires at its time only if a client holds the lock then, and else
// waits for the next grant and fires 50-500 ms after it ("on held+D"): by then
// the client granted has its reply and holds, so the fault meets a holder
// (or the servers while one holds). A fault that met a free lock instead
// found nothing a fixed workload's would not: the drawn workload keeps the
// fault coverage of the fixed one. From a stream of its own, one draw per
// fault whatever its kind, so every other draw is what it was.
void aim_at_grants(uint64_t seed, std::vector<FaultEvent>& events) {
  sim::Rng rng = sim::Rng(seed).split("profile/idle-aim");
  for (FaultEvent& e : events) {
    const Duration after = Duration::millis(rng.between(50, 500));
    if (e.kind == FaultKind::kHeal || e.after_grant) continue;
    e.after_grant = after;
    e.unless_held = true;
  }
}

}  // namespace

FaultSchedule generate_schedule(const std::vector<std::string>& parts, uint64_t seed,
                                const DeploymentView& view) {
  FaultSchedule schedule;
  for (const auto& part : parts) {
    const auto it = generators().find(part);
    LOCKSIM_ASSERT_MSG(it != generators().end(), "parse_profile() let only known parts through");
    Draw draw(seed, part, view);
    it->second(draw, schedule.events);
  }
  if (view.idle_lock) aim_at_grants(seed, schedule.events);
  std::stable_sort(schedule.events.begin(), schedule.events.end(),
                   [](const FaultEvent& a, const FaultEvent& b) { return a.at < b.at; });
  for (const FaultEvent& e : schedule.events) {
    LOCKSIM_ASSERT_MSG(e.at >= Duration::zero() && e.at <= view.run_length,
                       "a profile's faults fall inside the run");
    LOCKSIM_ASSERT(e.duration >= Duration::zero() && e.duration.ns % 1'000'000 == 0);
  }
  return schedule;
}

}  // namespace locksim::faults
