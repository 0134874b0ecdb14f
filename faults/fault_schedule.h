// A fault schedule is data: timed events the nemesis applies to named nodes.
//
// Keeping faults as data (not code) is what lets a scenario file reproduce a
// published failure step by step, a profile generate thousands of schedules
// from seeds, and a shrinker cut a failing schedule down.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "env/time.h"

namespace locksim::faults {

enum class FaultKind {
  kPause,      // freeze `node` for `duration` (GC pause, SIGSTOP)
  kSetDrift,   // from now on, `node`'s clock runs drift_ppm fast (negative: slow)
  kJumpClock,  // step `node`'s clock by `jump` (negative: backwards)
  kCrash,      // crash `node`; restart it after `duration` (zero: stays down)
  kPartition,  // cut side_a from side_b for `duration` (zero: until a heal);
               // one_way: only side_a -> side_b is cut
  kHeal,       // restore every cut link (a timed partition restores only its own)
  kDelay,      // add `delay` to the latency between the sides for `duration`
  kLoss,       // set the loss rate between the sides to `loss_probability` (for `duration`)
  kHang,       // stop client `node`'s work (its critical section or its wait) while its
               // process runs on: timers, connections, a watchdog (zero duration: for good)
};

const char* to_string(FaultKind k);

// The target of a fault that waits for a grant: the client granted.
inline constexpr const char* kGranteeTarget = "@grantee";

struct FaultEvent {
  Duration at;  // true time since the run started
  FaultKind kind = FaultKind::kPause;
  std::string node;
  Duration duration = Duration::zero();
  int64_t drift_ppm = 0;
  Duration jump = Duration::zero();
  std::vector<std::string> side_a, side_b;
  bool one_way = false;               // kPartition: A->B
  Duration delay = Duration::zero();  // kDelay: the latency added
  double loss_probability = 0.0;      // kLoss: the rate, in [0, 1]
  // Set: the fault waits, from `at`, for the lock's next grant (the moment
  // its store records a new holder, before the grant's reply leaves) and
  // fires this long after it. How a schedule meets a lock where it is
  // fragile without knowing when the clients will take it: a partition that
  // holds the grant's reply, a crash before the grant is replicated. A
  // target "@grantee" names the client granted (and requires this).
  std::optional<Duration> after_grant;
  // With after_grant ("on held+D"): fire at `at` at once if a client holds
  // the lock then, and wait for the next grant only if nobody does. How a
  // swarm schedule meets a lock that is free most of the time without
  // losing the faults that would have met a long hold (a grant may never
  // come after a hold that lasts to the run's end).
  bool unless_held = false;

  // "pause c1 at 5s for 12s" — the same syntax parse_fault() reads.
  std::string describe() const;
  // "5s", or "5s on grant+200ms" for a fault that waits for a grant ("5s on
  // held+200ms" for one that waits only when nobody holds).
  std::string when() const;

  // Its targets, then its parameters: the :value of the :nemesis op that
  // records it in the history (history/history.h lists them all):
  //   pause ["c1" "12s"]   drift ["c4" "+50000ppm"]   jump ["redis-1" "+20s"]
  //   crash ["redis-1"] (stays down) or ["redis-1" "5s"] (restarts after 5 s)
  //   partition ["c1,c3" "redis-1"] (until a heal) or ["c1,c3" "redis-1" "10s"]
  //   one-way partition ["c1->redis-1"] or ["c1->redis-1" "10s"]
  //   heal [] (every link); the end of a timed partition: its sides, ["c1,c3" "redis-1"]
  //   delay ["c1" "redis-1" "5s" "12s"] (for 5 s, by 12 s); its end: ["c1" "redis-1"]
  //   loss ["c1" "redis-1" "0.2"] or ["c1" "redis-1" "0.2" "10s"]; its end
  //   sets the rate back: ["c1" "redis-1" "0"]
  // Strings in the syntax parse_fault() reads. The time is the op's own :time,
  // so it is not repeated here.
  std::vector<std::string> value() const;
};

struct FaultSchedule {
  std::vector<FaultEvent> events;
};

// Parses one fault in the command-line syntax:
//   pause NODE at T for D
//   drift NODE at T PPMppm            (e.g. +50000ppm, -2000ppm)
//   jump NODE at T [+|-]D             (e.g. +20s, -5s)
//   crash NODE at T [for D]           (restart after D; without: stays down)
//   partition A,B|C,D at T [for D]    (its own links back after D; without: until heal)
//   partition A,B->C,D at T [for D]   (one way: A,B cannot reach C,D; replies can)
//   heal at T
//   delay A,B|C,D at T for D by X     (X more latency both ways for D, order kept)
//   loss A,B|C,D at T RATE [for D]    (RATE in [0, 1]: retransmission delays)
// and, in any but heal, "at T on grant" or "at T on grant+D": from T, wait
// for the lock's next grant and fire then (or D after it); the target
// "@grantee" is the client granted, as in 'partition @grantee|redis-1 at 5s
// on grant for 10s'.
// Throws ConfigError naming `field`.
FaultEvent parse_fault(std::string_view text, std::string_view field);

}  // namespace locksim::faults
