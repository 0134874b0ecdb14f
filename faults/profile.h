// Fault profiles: (seed, deployment) -> fault schedule, "swarm" style.
//
// A profile is one column of ../shared/REFERENCE-VERDICTS.md (pause,
// failover, ...). It does not script one failure: each seed draws its own
// intensities (how many faults, how long, how strong, whom) within the
// profile's range, so a thousand seeds cover the space between "harmless" and
// "far past the boundary" instead of repeating one run (TigerBeetle's VOPR
// swarm options; Groce et al., "Swarm testing", 2012).
//
// A profile knows no backend and no algorithm by name. It works from what
// the run exposes (DeploymentView): the client nodes, the server nodes and
// which of them are primaries, and the lease that faults must outlast to
// matter (the lock's TTL or the session timeout). Its output is plain data
// (faults::FaultSchedule), so it lands in result.json and a replay with the
// same seed and profile reproduces it exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "env/time.h"
#include "faults/fault_schedule.h"

namespace locksim::faults {

// What a profile may aim at. Built by the runner from the deployment.
struct DeploymentView {
  std::vector<std::string> clients;  // "c1".."cN", in order; at least one
  // Servers a fault may hit (observers such as a failover monitor excluded),
  // in the deployment's order; at least one.
  std::vector<std::string> servers;
  // The servers whose loss forces a failover (masters, leaders); a subset of
  // `servers`. Empty: the deployment does not say, any server may be one.
  std::vector<std::string> primaries;
  // The time a fault must outlast to break the lock: the lease's TTL or the
  // session timeout. Positive.
  Duration lease = Duration::seconds(10);
  Duration run_length = Duration::seconds(60);  // faults fall inside it
  // TCP's: a partition longer than this breaks connections instead of
  // delaying them (sim/connection.h).
  Duration retransmission_limit = Duration::millis(924'600);
  // The lock's store names the client a grant went to (FaultEvent::
  // after_grant, "@grantee"): false for GETSET and ZooKeeper.
  bool grants_name_clients = false;
  // The workload leaves the lock free for long stretches (idle gaps between
  // holds, fewer clients than locksim run's fixed five): a fault at a drawn
  // instant would often meet nobody, so half the faults wait for the next
  // grant instead (generate_schedule). False for the fixed workload, whose
  // schedules stay what they were.
  bool idle_lock = false;
};

// The profiles, in the matrix's column order: none, client-clock,
// server-clock, pause, failover, crash-restart, partition, client-crash.
const std::vector<std::string>& profile_names();

// "pause+partition" -> {"pause", "partition"}: each part a known profile,
// none repeated; "none" only alone. "" is no profile. Throws ConfigError
// naming `field` ("--profile: expected ... got 'paws'").
std::vector<std::string> parse_profile(std::string_view text, std::string_view field);

// Whether the combination injects failovers (its deployment then needs
// replicas and a failover mechanism: the backend adds them).
bool wants_failover(const std::vector<std::string>& parts);

// Whether the combination's faults matter only by outlasting the lease
// (pause, partition): a lease longer than the run can never be crossed by them.
bool must_outlast_lease(const std::vector<std::string>& parts);

// The lease such a combination gives a lock whose default lease outlasts the
// run (the MySQL article's one-year deadline), drawn for `seed`: 2, 3 or 4
// times `longest_hold`, in whole seconds (a DATETIME deadline keeps no
// fraction), at least 1 s. Longer than every hold, so the lock is safe until
// a fault outlasts the lease; short enough that the profile's faults (a tenth
// of the lease to three leases) cross it. Pure.
Duration profile_drawn_lease(uint64_t seed, Duration longest_hold);

// How far behind the primary the replicas run in the failover profile's
// deployment, drawn for `seed`: 250 ms, 500 ms, 1 s or 2 s (an
// asynchronous replica under load). A write acknowledged inside this window
// before the primary dies is what a failover loses. Pure.
Duration profile_replication_lag(uint64_t seed);

// The client timeout the combination draws for `seed`: with "partition", one
// of none (sim::kNoTimeout: redis-py, hiredis) and the short ones real
// clients ship with (faults/network_draw.h), from its own stream; otherwise
// nullopt (the run's setting stands). Pure.
std::optional<Duration> profile_client_timeout(const std::vector<std::string>& parts,
                                               uint64_t seed);

// The shortest run that shows what the combination can do to a lock whose
// lease is `lease`: with "partition", 4 leases (capped at 60 s): a reply
// held through an outage longer than the lease arrives on TCP's backoff up
// to about the outage again after the heal. Zero otherwise. Pure.
Duration profile_min_run(const std::vector<std::string>& parts, Duration lease);

// The schedule of `parts` for `seed` against `view`: every part draws from
// its own stream split off (seed, part name), so adding a part to a
// combination never changes another part's faults. Events are sorted by time
// (stable), every duration a whole number of milliseconds (so each event's
// describe() reads back through parse_fault() unchanged), and every time
// inside view.run_length. Pure: the same arguments give the same schedule.
FaultSchedule generate_schedule(const std::vector<std::string>& parts, uint64_t seed,
                                const DeploymentView& view);

}  // namespace locksim::faults
