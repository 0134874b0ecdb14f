// Safety margins (issue 23, `locksim margin`): how big a fault a lock
// survives. For one algorithm, one fault kind and one seed, bisection
// (harness/margin/bisect.h) over deterministic runs finds the smallest fault
// size at which the store stops protecting the holder — lease exposure
// (checkers/exposure_checker.h) or an overlap — and sets it beside theory.
//
// Every probe is built so that the fault meets the lock: one client (a lone
// holder: the exposure monitor asks "would a fresh contender get it?", so no
// second client is needed to see the lock fail), a fixed hold, and the fault
// aimed at @holder at a time read from a fault-free run of the same seed (a
// run is identical up to its first fault, so that is the holder the fault
// hits). Where a kind has a position as well as a size, the probe takes the
// worst position and the result names it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "env/time.h"
#include "harness/margin/bisect.h"
#include "harness/run_config.h"

namespace locksim::harness::margin {

enum class Kind {
  // The holder freezes (GC, SIGSTOP) 1 ms before its release: the worst
  // position, as the whole hold is already spent. Theory on a TTL lock:
  // lease - hold. On a ZooKeeper lock the lease is the session: the leader
  // expires it at (floor((last + T) / tick) + 1) x tick, T the negotiated
  // session timeout and `last` the last packet it heard from the holder, so
  // the theory is that deadline minus the pause's start (also in ticks).
  kPause,
  // The holder's clock is stepped back by the size between its first and
  // second hold, so its second acquire stamps a deadline that a contender
  // with a correct clock reads as that much earlier (GETSET, the MySQL
  // table: expiry judged by client clocks). Theory: lease - hold.
  kClientClock,
  // From the run's start, the clocks of a quorum of the lock's servers
  // (of one server: that server) run fast by the size, in ppm: a key lives
  // ttl / (1 + ppm / 1e6) of true time. Theory: it breaks when that is
  // shorter than the holder's time from the SET to its release, H:
  // ppm = (ttl / H - 1) x 1e6. H is the hold, or for Redlock (which cuts
  // the hold to its validity) ttl - (ttl x drift-factor + 2 ms).
  kServerDrift,
  // The same on every master (Redlock): a quorum of keys goes as early.
  kServerDriftAll,
  // The same on one master of several (Redlock): the others keep a quorum,
  // so theory says it never breaks however fast that clock runs.
  kServerDriftOne,
  // From the run's start the holder's own clock runs slow by the size, in
  // ppm, for a lock whose careful client holds to the end of the validity it
  // computes (Redlock): by that clock it holds (ttl - (ttl x drift-factor +
  // 2 ms)) / (1 - ppm / 1e6) of true time from t1, while the quorum's keys,
  // set a few hops after t1 (delta), live ttl by correct clocks. Theory:
  // ppm = (1 - (ttl - reserve) / (ttl + delta)) x 1e6, delta from the
  // fault-free run (the smallest over its holds): its drift factor's edge.
  kClientDrift,
  // The holder is cut from the servers that hold its lease (both ways) 1 ms
  // before its release, for the size: the worst position, as for kPause.
  // Theory: never. Unlike a pause, the holder's own clock runs on: its
  // release times out (the client's command timeout, well inside the
  // ttl - hold the lease has left) and that ends the hold. A lock that
  // breaks anyway breaks another way (docs/measurements.md: GETSET).
  kPartition,
  // Mid first hold the clocks of the servers that hold the lease (a quorum
  // for Redlock) step forward by the size: the key's deadline, read on the
  // stepped clock, comes that much sooner in true time. Theory: ttl - hold,
  // whatever the position in the hold (the step moves the deadline by its
  // size whenever it comes, as long as the key still lives).
  kServerClockStep,
  // The same step on every master (Redlock): the edge is the quorum's.
  kServerClockStepAll,
  // The same step on one master of several (Redlock): the others keep a
  // quorum, so theory says it never breaks however far that clock steps.
  kServerClockStepOne,
  // The size is the replication lag of one replica; the master crashes (for
  // good) 500 ms after the grant and a quick failover promotes the replica.
  // Theory: the grant's write reached the replica only if lag < the time
  // from the write to the crash, so it breaks at lag = crash - grant.
  kFailoverLag,
  // Mid first hold the servers that hold the lease crash and restart after
  // the size (for Redlock: enough masters that the rest are no quorum).
  // Without fsync a restart comes back empty: it breaks at any size.
  kCrashDowntime,
  // Every message between the holder and its servers is delayed by the size
  // from its first acquire until the grant's reply: the key is set a delay
  // before the client learns it holds. A grant believed that late would
  // break at lease - hold, but the client's command timeout (500 ms) gives
  // up on any reply later than itself: theory says never.
  kDelaySpike,
};

const char* to_string(Kind kind);  // "pause", "client-clock", "server-drift", ...

// Every kind, in the order --help and the margins table list them.
const std::vector<Kind>& all_kinds();

// The unit of a kind's size: what its fault takes in the fault syntax
// (faults/fault_schedule.h): a duration, searched in whole milliseconds, or
// a clock rate in ppm, searched in whole ppm.
enum class Unit { kNanos, kPpm };
Unit unit_of(Kind kind);
const char* unit_name(Unit unit);  // "ns", "ppm": the suffix of margin.json's keys
// The search's step in the kind's unit: 1 ms for a duration (what the
// simulation tells apart cheaply), 1 ppm for a drift.
int64_t step_of(Kind kind);
// The fastest drift the fault syntax takes (faults/nemesis.cpp: |ppm| < 1e6).
inline constexpr int64_t kDriftPpmMax = 999'999;
// A size of `kind` as people read it: "8.001s", "+10305ppm" (a quorum's
// clocks that fast), "10497ppm slow" (client-drift: the size is how slow the
// holder's clock runs; its fault reads `drift c1 at 0s -10497ppm`). A
// duration prints to the nanosecond where it is not whole milliseconds
// (format_exact_seconds), so a theory's digits are all there.
std::string format_size(Kind kind, int64_t size);
// "9.7045s": seconds with at least three decimals and as many more as the
// value needs (to the nanosecond), so a formula's numbers evaluate to its
// result (format_seconds truncates to the millisecond).
std::string format_exact_seconds(int64_t ns);
// What the lease is called for `config`'s lock: "ttl", "watchdog timeout"
// (Redisson's renewed lease), "session timeout" (ZooKeeper).
std::string lease_name(const RunConfig& config);

// The kinds measured for `algorithm`, in all_kinds() order; empty for an
// algorithm none applies to.
std::vector<Kind> kinds_for(const std::string& algorithm);

// The kind named `text` for `algorithm`. Throws ConfigError (one line, naming
// --fault and the kinds that apply) for an unknown kind or one that does not
// apply.
Kind parse_kind(std::string_view text, const std::string& algorithm);

// --range for `kind`: "LO..HI" as durations ("0s..20s") or rates in ppm
// ("0ppm..50000ppm"), in the kind's unit. Throws ConfigError naming --range.
std::pair<int64_t, int64_t> parse_range(std::string_view text, Kind kind);

// The lease the theory speaks of: the algorithm's ttl parameter as given, or
// its default; for a ZooKeeper lock the negotiated session timeout.
Duration lease_of(const RunConfig& config);

struct MarginRequest {
  // The user's settings: algorithm, its parameters, seed, hold (fixed:
  // hold_min == hold_max), network. Clients, duration and faults are the
  // margin's own and are overwritten.
  RunConfig base;
  Kind kind = Kind::kPause;
  // Sizes searched, in the kind's unit (unit_of): nanoseconds, whole
  // milliseconds; or ppm.
  int64_t range_lo = 0;
  int64_t range_hi = 0;  // > range_lo
  // Whether the user gave --range; errors about the default range say so.
  bool range_given = false;
  // "PARAM=VALUE" when --vary set one of the settings: a run too long for
  // that value is named as --vary's, not as a --ttl nobody typed.
  std::string varied;
};

// The range searched when none is given: for durations 0 to twice the lease,
// which every kind here breaks well inside (theory: lease - hold); for a
// drift, 0 to 999999 ppm, all the fault syntax takes.
void set_default_range(MarginRequest& request);

// Refuses a setting the user gave (config.given_paths) that the margin runs
// set themselves for `kind` to another value, which ran with margin's value
// and said nothing:
// the replica, failover, monitor and lag of failover-lag (the lag is the
// size searched), and the hold of a drift kind on a lock whose careful
// client holds to the end of its validity (Redlock). Throws ConfigError
// naming the flag as typed. Call before the config is validated as a run,
// whose own refusals would point at a --profile margin does not take.
void refuse_given_it_sets(const RunConfig& config, Kind kind);

// Validates what the runs cannot: a fixed hold of at least kHoldMin, a range
// of whole milliseconds with lo < hi, runs no longer than a run may be.
// Throws ConfigError naming the flag.
void validate(const MarginRequest& request);

// One of the two runs that confirm the answer.
struct ConfirmingRun {
  int64_t size = 0;            // in the kind's unit
  bool failed = false;         // exposure or overlap seen
  std::string replay_command;  // `locksim run ...`, pasteable
  RunConfig config;            // the same run, to draw it again (a timeline)
};

// A drift's edge is not sharp: a drift moves when every later event
// happens, and with it the network jitter of the SETs that decides the edge
// by a few milliseconds, so a drift below a held size can break (seed 1,
// Redlock client-drift: 10412-10420 ppm break, 10421-10444 hold, 10445 on
// breaks). Bisection trusts monotony and would report the upper island. So
// after it a drift kind scans the sizes below its edge, ascending, and
// takes the first that breaks: the window is 1 % of the edge (wider than
// the jitter band seen, ~0.6 %), in at most kDriftScanRunsMax runs (every
// ppm up to an edge of 12800 ppm, coarser above). Below the window nothing
// is tried: a smaller fatal drift there is not ruled out.
struct DriftScan {
  int64_t lo = 0;            // the smallest size scanned, in ppm
  int64_t hi = 0;            // the largest: the bisection's held size less a step
  int64_t step = 1;          // ppm between scanned sizes
  int runs = 0;              // scanned sizes run (it stops at the first break)
  int64_t bisected = 0;      // the bisection's breaking size, before the scan
  bool found_lower = false;  // a size in the window broke: the margin moved down to it
};
inline constexpr int kDriftScanRunsMax = 128;
inline constexpr int64_t kDriftScanPercent = 1;

struct MarginResult {
  std::string algorithm;
  Kind kind = Kind::kPause;
  uint64_t seed = 0;
  Duration lease;
  std::string lease_label;  // lease_name(): "ttl", "watchdog timeout", "session timeout"
  Duration hold;
  int64_t range_lo = 0, range_hi = 0;  // in the kind's unit
  Bisection::Outcome outcome = Bisection::Outcome::kFound;
  std::optional<ConfirmingRun> below;  // the largest size that held (none: breaks at any size)
  std::optional<ConfirmingRun> above;  // the smallest that failed: the margin (none: never)
  // The search's resolution in the kind's unit (step_of: 1 ms, or 1 ppm;
  // a drift scan's step): for kFound, above - below, so the edge is known
  // to it (and for a drift, only within the scanned window).
  int64_t resolution = 0;
  std::optional<DriftScan> scan;  // a drift kind's scan below the edge (kFound only)
  // In the kind's unit; none where theory says it never breaks (or, for a
  // session, when no run expired one to say when the server last heard).
  std::optional<int64_t> theory;
  std::string theory_formula;        // "ttl - hold = 10s - 2s"
  bool theory_any_size = false;      // theory says it breaks at any size
  Duration tick = Duration::zero();  // ZooKeeper's tick, for the margin in ticks; else zero
  std::string position;              // where the fault sits, in words
  int probes = 0;                    // runs, the fault-free one included
};

// Called after each probe, for a progress line: its number, size and answer.
using ProgressFn = std::function<void(int probe, int64_t size, bool failed)>;

// The bisection for `request` (validated first). Throws ConfigError for bad
// input (and for a lock the lone client never holds in the fault-free run),
// std::runtime_error when a run cannot be judged (unknown verdict).
MarginResult measure_margin(const MarginRequest& request, const ProgressFn& progress = {});

// The margin (above's size) minus theory, in the kind's unit; only for
// kFound with a theory.
int64_t difference(const MarginResult& result);

// True when theory lies within the search's resolution of the margin
// (|difference| <= resolution): the runs cannot tell the two apart, so the
// difference is no disagreement. Only for kFound with a theory.
bool within_resolution(const MarginResult& result);

// Every run of one measure_margin(), the fault-free one included: 2 ends and
// the halvings to one step (a 20 s range in 1 ms steps: 15; 0..999999 ppm:
// 20, far below kProbesMax), and a drift's scan below the edge.
inline constexpr int kRunsPerMarginMax = kProbesMax + 1 + kDriftScanRunsMax;

// The smallest hold measured: the pause starts 1 ms before the release, so a
// hold must leave room for it and for the acquire's round trip.
inline constexpr Duration kHoldMin = Duration::millis(10);

}  // namespace locksim::harness::margin
