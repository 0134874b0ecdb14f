// The margin's fault kinds from the inside (margin.h is the outside): which
// algorithms each applies to, how a probe's fault is built, and what theory
// says. Split from margin.cpp, which runs the search, so each kind's run and
// its theory sit side by side.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "env/time.h"
#include "harness/margin/margin.h"
#include "harness/run_config.h"

namespace locksim::harness::margin {

// True for the MySQL table's locks (a DATETIME deadline, a monitor that
// fails the primary over).
bool mysql_lock(const RunConfig& config);

// The masters a server clock fault of `kind` moves: a quorum (the
// algorithm's, or N/2+1; a one-master lock's one master) for server-drift and
// server-clock-step, every one for the -all kinds, the first for -one.
std::vector<std::string> clock_targets(const RunConfig& config, Kind kind);

// True for a lock whose lease is a ZooKeeper session (no ttl parameter).
bool session_lock(const RunConfig& config);

// True for Redlock's kind: a drift-factor parameter, so its holder works to
// the end of its validity and a drift probe holds that long.
bool holds_to_validity(const RunConfig& config);

// A run of `base` with one fault of `size` (zero: none) placed for `kind`,
// given the first hold of the fault-free run began at `held_from`.
RunConfig with_fault(const RunConfig& base, Kind kind, int64_t size, TimePoint held_from);

// When the pause of a kPause probe starts: 1 ms before the first release, in
// whole microseconds (rounded down, still inside the hold), so the replay
// command reads "at 2000522us", not a nanosecond count.
Duration pause_start(const RunConfig& base, TimePoint held_from);

// What the fault-free run of a margin's base shows that a theory needs: the
// instants its mechanism turns on, read once before the search (a run is
// identical up to its first fault, so every probe shares them).
struct FaultFree {
  TimePoint held_from;  // the lone client's first hold began (true time)
  // The longest a hold's quorum of keys must live: over every hold of the
  // run, from when the last key of its quorum was set (the lock trace: the
  // q-th lease server to store its token) to its release. Redlock sets its
  // keys one master after another, a few network hops after t1, and each
  // hold's hops differ by their jitter, so the worst hold decides.
  std::optional<Duration> quorum_life_max;
  // For a fault on the client's own clock, which moves when each later hold
  // starts (and so the jitter of its SETs' hops): the time from the exposed
  // hold's acquire (t1) to its quorum's last SET, read from the run above
  // the edge, as a session lock's `last heard` is.
  std::optional<Duration> exposed_quorum_delay;
  // The second acquire's invoke and the second hold's release, where the run
  // has them: a client-clock step moves the deadline that acquire writes.
  std::optional<TimePoint> second_acquire;
  std::optional<TimePoint> second_release;
};

// The base run without a fault, traced: what FaultFree says. Throws
// std::runtime_error when the lone client never holds the lock.
FaultFree observe_fault_free(const RunConfig& base);

struct Theory {
  std::optional<int64_t> size;  // in the kind's unit; none: never breaks, or not known
  std::string formula;          // how, with the numbers put in
  bool any_size = false;        // it breaks at any size (size is then none)
};

// The servers a lone holder's grant writes to: every Redis master, the
// MySQL primary, every ZooKeeper server.
std::vector<std::string> lease_servers(const RunConfig& config);

// The Redis masters whose keys make the lease: a quorum (the algorithm's,
// or N/2+1; the one master of a single-server lock).
std::vector<std::string> quorum_servers(const RunConfig& config);

// What the run that expired a ZooKeeper session noted of it, in ns: the last
// packet the leader heard, on the leader's monotonic clock, and that clock's
// offset from true time (its tick phase: the clock's ticks are the leader's
// own, not multiples of tick in true time).
struct SessionHeard {
  int64_t last_ns = 0;
  int64_t clock_offset_ns = 0;
};

// A ZooKeeper lock's deadline for a fault starting at pause_start(): the
// session expires on the leader's tick after the last packet heard + the
// timeout.
Theory session_theory(const RunConfig& base, TimePoint held_from,
                      std::optional<SessionHeard> heard);

// The theory for `kind` on the probes' `base`. For a session lock it needs
// `heard`: when the leader last heard the holder before the pause, as the run
// that expired the session noted it (none if no run did).
Theory theory_of(const RunConfig& base, Kind kind, const FaultFree& seen,
                 std::optional<SessionHeard> heard);

// The expired session's last packet and the leader's clock offset, read from
// a run's backend notes ("zookeeper.session_expired[0]": the offset is the
// deadline on that clock less the true time it expired at, to the note's
// millisecond); none without an expiry.
std::optional<SessionHeard> session_heard(
    const std::vector<std::pair<std::string, std::string>>& backend_notes);

}  // namespace locksim::harness::margin
