// Swarm workloads (issue 27): the workload of a sweep run drawn from its seed,
// as the profile draws its faults.
//
// Why: a fixed workload meets a fault only where the two happen to line up.
// Five clients that hand the lock over within milliseconds never leave the
// free period a lagging replica needs to lose a grant; holds of 1-3 s end
// long before a ZooKeeper session or a MySQL lease runs out under a
// partition; a Redlock client that never holds to the end of its validity
// never feels its clock drift. A sweep that draws the workload per seed
// (TigerBeetle's swarm testing; Groce et al., "Swarm testing", 2012) covers
// the quiet lock, the long critical section and the careful client as well
// as the contended lock.
//
// Each seed draws one shape, then its values, within bounds set by the lock
// (its lease or session, whether it reports a validity) and the profile (the
// replication lag a failover deployment will have):
//   contended  today's fixed workload: 5 clients, holds of 1-3 s, no idle time;
//   quiet      2-3 clients and idle gaps of 1.5-4 x max(replication lag, 1 s)
//              after each release: a grant follows a free period;
//   long       2-4 clients holding 40-75 % of a TTL lease (1.2-2.5 sessions
//              for a session lock, which its heartbeats keep alive; a lease
//              drawn by the pause and partition profiles is drawn here too,
//              so the hold is a share of it);
//   edge       2-5 clients holding to the end of the validity their lock
//              reports (Redlock); for a lock that reports none, 60-85 % of
//              its TTL lease.
// A lock that reports a validity (a drift-factor parameter) is held by a
// careful client in every shape: a hold never outlasts the validity, so a
// careless client's overrun is never read as the algorithm's violation.
#pragma once

#include "harness/run_config.h"

namespace locksim::harness {

// `config` with its workload drawn when config.workload.draw is set (else
// unchanged): every workload setting still at its default (WorkloadParams{})
// is replaced by the seed's draw, one given is kept, and `draw` is cleared, so
// the result's replay command and result.json carry the drawn values and a
// second call changes nothing. The algorithm's `ttl` is set only where the
// profile would draw a lease and the long or edge shape was drawn. Pure: from
// its own stream split off (seed, "workload/draw"), so the profile's and the
// clients' draws are what they were. Call before with_profile_deployment().
RunConfig with_drawn_workload(const RunConfig& config);

}  // namespace locksim::harness
