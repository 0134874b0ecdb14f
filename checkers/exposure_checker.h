// The lease-exposure checker: how close a run came to a violation.
//
// For each held interval, the stretches of true time in which the holder
// believed it held the lock but the lock's store would have granted it to a
// fresh contender (its key expired or gone on the master, on a quorum of
// masters for Redlock; its row's deadline passed by true time; its ZooKeeper
// node gone). The backend answers that question from its own state
// (sim::Deployment::lock_free_for_fresh_contender); the simulation asks after
// every event of a hold and at each instant the answer can change by time
// alone (harness/exposure_monitor.h); this checker only reads the windows.
//
// Exposure with an overlap is what the mutual-exclusion checker already
// reports; exposure without one is a *latent* finding: the violation that was
// waiting for a contender to step in. Not a violation (exit 0), but reported.
//
// Holder never told: a held interval exposed while the holder still had
// every reason to believe it held — by its own clock its lease's validity had
// not run out (or the lease is renewed in the background, as Redisson's
// watchdog does, and has no end the holder knows), and the algorithm never
// told it otherwise (no error, no callback) before it released. A holder that
// overran a validity it was given was told; one whose store dropped the lease
// inside that validity (a failover, a server's clock, a watchdog renewal cut
// off) had no way to know, and that is what makes a lost lease dangerous.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkers/mutex_checker.h"
#include "env/time.h"
#include "history/history.h"

namespace locksim::checkers {

// One stretch of exposure of one held interval, half-open [start, end).
struct ExposureWindow {
  int client = 0;
  int64_t acquire_index = -1;  // the held interval's acquire :ok op
  TimePoint start;
  TimePoint end;
  // When the window opened, the holder believed its lease valid: its own
  // clock read before the lease's validity ran out, or the lease had no end
  // it knew (renewed in the background, a ZooKeeper node).
  bool believed = false;
};

// What the simulation sampled: raw windows (a window opens at the first
// sample that found the lock free while the client held it and closes at the
// first that did not), and whether the backend could answer at all.
struct ExposureSamples {
  bool supported = false;  // false: the backend cannot tell (or live mode)
  // The sampling grid; zero: exact (the simulation's monitor looks at every
  // instant the answer can change).
  Duration resolution = Duration::zero();
  int64_t samples = 0;
  std::vector<ExposureWindow> windows;
  // Held intervals (acquire :ok op index) whose holder the algorithm told,
  // before it released, that the lock may be lost (zk-curator's SUSPENDED
  // cuts its hold short). Such a holder was told, however late.
  std::vector<int64_t> told;
};

struct ExposureReport {
  bool supported = false;
  Duration resolution = Duration::zero();
  std::vector<ExposureWindow> windows;  // clipped to their held intervals, by start
  Duration total = Duration::zero();
  Duration largest = Duration::zero();
  int intervals_exposed = 0;  // held intervals with any exposure
  // Held intervals (acquire :ok op index, ascending) with a window that
  // opened while the holder believed it held and that the algorithm never
  // told otherwise: the "holder never told" finding (see above).
  std::vector<int64_t> never_told;
  // Exposure, but no mutual-exclusion overlap: reported, not a violation.
  bool latent = false;
  std::string explanation;
};

// Clips each raw window to its held interval of `history` (a window whose
// interval is unknown is dropped), orders them, sums them up and words it.
// `mutex` is the mutual-exclusion verdict of the same history.
ExposureReport check_exposure(const history::History& history, const ExposureSamples& samples,
                              const Verdict& mutex);

}  // namespace locksim::checkers
