#include "faults/network_draw.h"

#include <algorithm>

#include "env/assert.h"
#include "sim/connection.h"

namespace locksim::faults {

namespace {

std::vector<std::string> some_servers(sim::Rng& rng, const std::vector<std::string>& servers) {
  // All of them (a client cut off), or a minority (Redlock keeps a quorum).
  if (servers.size() < 3 || rng.chance(0.5)) return servers;
  const size_t n =
      static_cast<size_t>(rng.between(1, static_cast<int64_t>(servers.size() - 1) / 2));
  std::vector<std::string> out(servers.begin(), servers.begin() + static_cast<ptrdiff_t>(n));
  return out;
}

Duration draw_length(sim::Rng& rng, const NetworkDrawInput& in) {
  const int64_t bucket = rng.between(0, in.run_length > in.retransmission_limit ? 2 : 1);
  if (bucket == 0) return rng.uniform_duration(in.ttl / 10, in.ttl - in.ttl / 10);
  if (bucket == 1) {
    // Past the TTL, but short enough that what the heal delivers lands
    // inside the run where the run allows it (see draw_start).
    const Duration lo = in.ttl + in.ttl / 10;
    const Duration hi = std::max(lo + in.ttl / 10, std::min(in.ttl * 3, in.run_length * 45 / 100));
    return rng.uniform_duration(lo, hi);
  }
  // A TTL under a second draws the second itself (the range would be empty).
  return in.retransmission_limit +
         rng.uniform_duration(Duration::seconds(1), std::max(Duration::seconds(1), in.ttl));
}

// When a fault of `length` starts: early enough that what it held arrives
// inside the run where the run allows it, else in the first half. TCP's
// backoff sends a segment held through an outage of L up to about L after
// the heal, so the fault and that wait take 2 x L.
Duration draw_start(sim::Rng& rng, const NetworkDrawInput& in, Duration length) {
  const Duration latest = in.run_length - in.run_length / 10 - length * 2;
  return rng.uniform_duration(Duration::zero(),
                              latest > Duration::zero() ? latest : in.run_length / 2);
}

}  // namespace

Duration draw_client_timeout(sim::Rng& rng) {
  // None twice: it is the default of redis-py and hiredis, the clients most
  // locks are written with.
  static const Duration kTimeouts[] = {sim::kNoTimeout,       sim::kNoTimeout,
                                       Duration::millis(500), Duration::seconds(2),
                                       Duration::seconds(3),  Duration::seconds(60)};
  return kTimeouts[rng.below(std::size(kTimeouts))];
}

NetworkDraw draw_network_faults(sim::Rng& rng, const NetworkDrawInput& in) {
  LOCKSIM_ASSERT(!in.clients.empty() && !in.servers.empty() && in.faults_max >= 1);
  LOCKSIM_ASSERT(in.run_length > Duration::zero() && in.ttl > Duration::zero());
  NetworkDraw out;
  out.client_timeout = draw_client_timeout(rng);
  const int64_t count = rng.between(1, in.faults_max);
  for (int64_t i = 0; i < count; ++i) {
    FaultEvent e;
    e.duration = draw_length(rng, in);
    std::vector<std::string> clients = in.clients;
    if (rng.chance(0.5)) clients = {in.clients[rng.below(in.clients.size())]};
    std::vector<std::string> servers = some_servers(rng, in.servers);
    // Weights. A late grant needs the grant's reply held past the TTL: a
    // delay spike longer than its own latency does that to whatever is
    // granted inside it (the request arrives X late, its reply leaves inside
    // the spike and is X late too), so spikes are drawn most; a cut that
    // lets requests in but holds replies, next; the rest, less.
    const int64_t kind = rng.between(0, 99);
    if (kind < 10) {  // both ways
      e.kind = FaultKind::kPartition;
    } else if (kind < 25) {  // requests get in, replies do not
      e.kind = FaultKind::kPartition;
      e.one_way = true;
      std::swap(clients, servers);
    } else if (kind < 35) {  // requests do not get in
      e.kind = FaultKind::kPartition;
      e.one_way = true;
    } else {
      // A slow path (a congested switch, the server's own link) slows every
      // client most of the time.
      e.kind = FaultKind::kDelay;
      if (rng.chance(0.6)) clients = in.clients;
      e.delay = rng.uniform_duration(in.ttl * 3 / 4, in.ttl * 2);
      // At least 10 ms, a TTL under 7 ms included (its range would be empty).
      e.duration =
          rng.uniform_duration(Duration::millis(10), std::max(Duration::millis(10), e.delay * 2));
    }
    e.at = draw_start(rng, in, e.kind == FaultKind::kDelay ? e.duration + e.delay : e.duration);
    e.side_a = std::move(clients);
    e.side_b = std::move(servers);
    out.events.push_back(std::move(e));
  }
  std::stable_sort(out.events.begin(), out.events.end(),
                   [](const FaultEvent& a, const FaultEvent& b) { return a.at < b.at; });
  // Pair of the draws: every event reads back from its own text.
  for (const FaultEvent& e : out.events) {
    LOCKSIM_ASSERT(parse_fault(e.describe(), "draw").describe() == e.describe());
  }
  return out;
}

}  // namespace locksim::faults
