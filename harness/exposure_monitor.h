// Samples, while anyone holds the lock, whether the lock's store would grant
// it to a fresh contender right now (sim::Deployment::
// lock_free_for_fresh_contender), and keeps the stretches in which it would,
// per held interval: the raw input of the exposure checker
// (harness/check/exposure_checker.h).
//
// Why sampling, and why it cannot perturb the run: the answer can flip
// without an event (a key expires at an instant of its server's clock), so
// the monitor looks every kResolution of true time. Its ticks are World
// events that only read state — no fiber is woken, no random number drawn,
// nothing sent — so a run's history is the same with or without it. It
// ticks only while someone holds, so idle stretches cost nothing. Sampling
// can miss a window shorter than kResolution, never invent one: a sample
// reports free only when the store would grant at that instant.
#pragma once

#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "harness/check/exposure_checker.h"
#include "sim/backend.h"
#include "sim/world.h"

namespace locksim::harness {

class ExposureMonitor {
 public:
  // The clients holding now, as (client, acquire :ok op index), in client order.
  using Holders = std::function<std::vector<std::pair<int, int64_t>>()>;

  // `world`, `deployment` and whatever `holders` reads must outlive it.
  ExposureMonitor(sim::World& world, sim::Deployment& deployment, sim::LockProbe probe,
                  Holders holders);

  // A hold began: starts the ticks if they are not running.
  void hold_began();

  // The samples so far; open windows close at `end` (the run's end).
  ExposureSamples finish(TimePoint end);

  // 1 ms: far below any TTL or pause a boundary test separates (1 % of
  // seconds), and a 60 s run of continuous holding costs 60,000 cheap reads.
  static constexpr Duration kResolution = Duration::millis(1);

 private:
  void tick();

  sim::World& world_;
  sim::Deployment& deployment_;
  sim::LockProbe probe_;
  Holders holders_;
  bool ticking_ = false;
  bool supported_ = true;
  int64_t samples_ = 0;
  std::map<std::pair<int, int64_t>, TimePoint> open_;  // window start per held interval
  std::vector<ExposureWindow> closed_;
};

}  // namespace locksim::harness
