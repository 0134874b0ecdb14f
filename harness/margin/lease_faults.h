// The margin kinds that cut the holder off from the servers of its lease or
// take the lease from them: partition, server-clock-step, failover-lag,
// crash-downtime, delay-spike (margin.h: Kind says what each does and what
// theory says). Split from kinds.cpp, which keeps the names, units and the
// clock kinds, so each of these runs sits beside its theory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "env/time.h"
#include "harness/margin/kinds.h"
#include "harness/margin/margin.h"
#include "harness/run_config.h"

namespace locksim::harness::margin {

// True for the kinds this file builds.
bool is_lease_fault(Kind kind);

// The settings `kind` needs of the deployment, set on the probes' base
// before the fault-free run: failover-lag gives the master one replica and
// a quick failover (down after kFailoverDownAfter, found kFailoverDiscovery
// later) so the promotion comes inside the hold. Other kinds: unchanged.
void prepare_deployment(RunConfig& config, Kind kind);

// Adds the fault of `size` (> 0) for `kind` to `config`, placed from the
// first hold's start `held_from` (read from the fault-free run).
void add_lease_fault(RunConfig& config, Kind kind, int64_t size, TimePoint held_from);

// The theory of `kind` on the probes' base.
Theory lease_fault_theory(const RunConfig& base, Kind kind);

// Where the fault sits in the run, in words, for the result.
std::string lease_fault_position(Kind kind);

// The largest size of `kind` a bisection may search, or nullopt for no
// bound. A delay spike holds the request and the grant's reply alike, so
// the client hears a grant two delays after asking; past its command
// timeout it gives the grant up and the acquire fails, and the lock holds
// again. Its fatal sizes are a window, ttl - hold < delay < timeout / 2,
// not a ray, and bisection trusts a ray: it searches below the window's top
// (half the timeout less kReplySlack, floored to 1 ms).
std::optional<int64_t> searched_size_max(const RunConfig& base, Kind kind);

// The room left for the network's own latency, both ways, below half the
// command timeout: a probe at the top must still hear its grant.
inline constexpr Duration kReplySlack = Duration::millis(5);

// The smallest size searched by default: crash-downtime starts at 1 ms (a
// zero downtime is no crash at all); the others at zero.
int64_t default_range_lo(Kind kind);

// failover-lag's quick failover: short beside the 2 s hold, so a replica is
// promoted (at crash + 500 ms + 200 ms) while the holder still holds.
inline constexpr Duration kFailoverDownAfter = Duration::millis(500);
inline constexpr Duration kFailoverDiscovery = Duration::millis(200);
// When failover-lag's master crashes: after the grant, inside the hold, so
// the theory (lag > crash - grant) is a size far above the 1 ms step.
inline constexpr Duration kFailoverCrashAfter = Duration::millis(500);

}  // namespace locksim::harness::margin
