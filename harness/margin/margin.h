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
#include <vector>

#include "env/time.h"
#include "harness/margin/bisect.h"
#include "harness/run_config.h"

namespace locksim::harness::margin {

enum class Kind {
  // The holder freezes (GC, SIGSTOP) 1 ms before its release: the worst
  // position, as the whole hold is already spent. Theory: lease - hold.
  kPause,
  // The holder's clock is stepped back by the size between its first and
  // second hold, so its second acquire stamps a deadline that a contender
  // with a correct clock reads as that much earlier (GETSET, the MySQL
  // table: expiry judged by client clocks). Theory: lease - hold.
  kClientClock,
};

const char* to_string(Kind kind);  // "pause", "client-clock"

// The kinds this slice measures for `algorithm`, in the order --help lists
// them; empty for an algorithm it does not cover (ZooKeeper).
std::vector<Kind> kinds_for(const std::string& algorithm);

// The kind named `text` for `algorithm`. Throws ConfigError (one line, naming
// --fault and the kinds that apply) for an unknown kind or one that does not
// apply.
Kind parse_kind(std::string_view text, const std::string& algorithm);

// The lease the theory speaks of: the algorithm's ttl parameter as given, or
// its default. Throws ConfigError for an algorithm without one.
Duration lease_of(const RunConfig& config);

struct MarginRequest {
  // The user's settings: algorithm, its parameters, seed, hold (fixed:
  // hold_min == hold_max), network. Clients, duration and faults are the
  // margin's own and are overwritten.
  RunConfig base;
  Kind kind = Kind::kPause;
  Duration range_lo = Duration::zero();
  Duration range_hi = Duration::zero();  // > range_lo
};

// The range searched when none is given: 0 to twice the lease, which every
// kind here breaks well inside (theory: lease - hold).
void set_default_range(MarginRequest& request);

// Validates what the runs cannot: a fixed hold of at least kHoldMin, a range
// of whole milliseconds with lo < hi, runs no longer than a run may be.
// Throws ConfigError naming the flag.
void validate(const MarginRequest& request);

// One of the two runs that confirm the answer.
struct ConfirmingRun {
  Duration size;
  bool failed = false;         // exposure or overlap seen
  std::string replay_command;  // `locksim run ...`, pasteable
};

struct MarginResult {
  std::string algorithm;
  Kind kind = Kind::kPause;
  uint64_t seed = 0;
  Duration lease;
  Duration hold;
  Duration range_lo, range_hi;
  Bisection::Outcome outcome = Bisection::Outcome::kFound;
  std::optional<ConfirmingRun> below;  // the largest size that held (none: breaks at any size)
  std::optional<ConfirmingRun> above;  // the smallest that failed: the margin (none: never)
  Duration theory;
  std::string theory_formula;  // "ttl - hold = 10s - 2s"
  std::string position;        // where the fault sits, in words
  int probes = 0;              // runs, the fault-free one included
};

// Called after each probe, for a progress line: its number, size and answer.
using ProgressFn = std::function<void(int probe, Duration size, bool failed)>;

// The bisection for `request` (validated first). Throws ConfigError for bad
// input, std::runtime_error when a run cannot be judged (unknown verdict) or
// the lone client never holds the lock in the fault-free run.
MarginResult measure_margin(const MarginRequest& request, const ProgressFn& progress = {});

// The margin (above's size) minus theory; only for kFound.
Duration difference(const MarginResult& result);

// The smallest hold measured: the pause starts 1 ms before the release, so a
// hold must leave room for it and for the acquire's round trip.
inline constexpr Duration kHoldMin = Duration::millis(10);

}  // namespace locksim::harness::margin
