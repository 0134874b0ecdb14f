// One seed's network faults for the partition column (NP) of
// REFERENCE-VERDICTS.md, swarm style: for a fault profile to call.
//
// Why here and not in a profile: the profile framework (faults/profile.h)
// decides how a profile is named and run; this is the part that
// knows what a partition does to a lock: the heal must land before and after
// the TTL (a held grant is harmless before it, a violation after it), and
// sometimes past the retransmission limit (the connection breaks instead),
// and the client timeout must include `none` (redis-py, hiredis) as well as
// the short ones real clients ship with.
#pragma once

#include <string>
#include <vector>

#include "env/time.h"
#include "faults/fault_schedule.h"
#include "sim/rng.h"

namespace locksim::faults {

struct NetworkDrawInput {
  std::vector<std::string> clients;  // e.g. c1..c5 (at least one)
  std::vector<std::string> servers;  // e.g. redis-1..redis-5 (at least one)
  Duration run_length = Duration::seconds(60);
  Duration ttl = Duration::seconds(10);
  Duration retransmission_limit = Duration::millis(924'600);
  int faults_max = 3;  // faults per schedule, at most (at least one is drawn)
};

struct NetworkDraw {
  std::vector<FaultEvent> events;  // in time order, each as parse_fault() reads it back
  // A client timeout: sim::kNoTimeout for none, else what real clients use
  // (500 ms, Jedis 2 s, go-redis 3 s, Lettuce 60 s).
  Duration client_timeout;
};

// Draws one schedule: partitions (both ways, or one way either direction)
// and delay spikes (0.75 to 2 x TTL, lasting up to twice that; 65 % of the
// faults, 10/15/10 % for the cuts), between one
// client (or all of them) and the servers (all, or a minority); lengths
// below the TTL, past it (at most 3 x TTL or 45 % of the run), or (when the
// run is long enough) past the retransmission limit; each starting early
// enough that it and what it held (about its length again) end inside the
// run, else in the first half. Preconditions (asserted): the lists are
// non-empty, durations positive. Deterministic in `rng`.
NetworkDraw draw_network_faults(sim::Rng& rng, const NetworkDrawInput& in);

// One client timeout as NetworkDraw::client_timeout draws it.
Duration draw_client_timeout(sim::Rng& rng);

}  // namespace locksim::faults
