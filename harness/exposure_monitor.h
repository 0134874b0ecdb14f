// Watches, while anyone holds the lock, whether the lock's store would grant
// it to a fresh contender right now (sim::Deployment::
// lock_free_for_fresh_contender), and keeps the stretches in which it would,
// per held interval: the raw input of the exposure checker
// (checkers/exposure_checker.h).
//
// When it looks, and why that misses nothing: the answer changes only when
// an event changes a server's state (a write, a crash, a failover, a clock
// step) or when time alone reaches an instant the backend names in advance
// (a key's expiry on its server's clock, a deadline on a correct clock:
// LockExposure::until). So the monitor looks after every World event while
// someone holds, and wakes the World at each `until` (an event that does
// nothing, after which it looks). Windows therefore open and close at the
// exact instant, not on a sampling grid. A backend that stamps its state
// (Deployment::lock_state_stamp) spares the question after an event that
// changed neither the stamp nor the holds, before the last answer's
// `until`: the answer is the one already given, and so is every window. Looking only reads state —
// no fiber is woken, no random number drawn, nothing sent — so a run's history is the same with or
// without it, and idle stretches cost nothing.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "checkers/exposure_checker.h"
#include "env/assert.h"
#include "sim/backend.h"
#include "sim/world.h"

namespace locksim::harness {

class ExposureMonitor {
 public:
  // One client holding now: its held interval (acquire :ok op index), and
  // whether it still believes its lease valid (its own clock before the
  // lease's validity ran out, or a lease without end it knows of).
  struct Holder {
    int client = 0;
    int64_t acquire_index = -1;
    bool believes = false;
  };
  // The clients holding now, in client order, written into the vector given
  // (cleared first): called after every event of a hold, so it reuses one
  // buffer instead of allocating.
  using Holders = std::function<void(std::vector<Holder>&)>;

  // Installs itself as one of `world`'s event observers. `world`, `deployment` and
  // whatever `holders` reads must outlive it, and `world` must not run
  // events after it is gone. `use_stamp` false: ask after every event of a
  // hold whatever the backend's stamp says (the plain way tests compare with).
  ExposureMonitor(sim::World& world, sim::Deployment& deployment, sim::LockProbe probe,
                  Holders holders, bool use_stamp = true);

  // A hold began: look after the current event, and after every one until
  // nobody holds.
  void hold_began() {
    watching_ = supported_;
    holds_changed_ = true;
  }
  // A hold ended (a release began, or its holder crashed): look again. The
  // owner must say so: with a stamped backend the monitor does not read the
  // holders again until a hold began or ended, or the stamp moved.
  void hold_ended() { holds_changed_ = true; }

  // The windows so far; open ones close at `end` (the run's end).
  checkers::ExposureSamples finish(TimePoint end);

 private:
  // After every event. Inline, with the common case (nothing it reads
  // changed: 98 % of a set-nx-lua run's events, 80 % of a zk-curator one's)
  // in the World's observer call; the question itself is ask()'s.
  void look() {
    if (!watching_) return;
    if (!unchanged_since_last_answer()) {
      ask();
      return;
    }
    // The same holders, the same answer: every window stays as it is. Only
    // the count and the wake-up are what asking would have made them (a
    // wake-up already set for answer_until_, which is ahead, stands).
    ++samples_;
    LOCKSIM_ASSERT(!holding_.empty());
    // Asked before the call: an earlier wake-up stands on nearly every
    // event of a hold (answer_until_ is after now, as wake_at needs).
    if (answer_until_ != sim::LockExposure::kNoChange && !wake_stands_for(answer_until_)) {
      wake_at(answer_until_);
    }
  }
  // Reads the holders, asks the backend, and opens and closes windows.
  void ask();
  // Whether nothing look() reads can have changed since it last asked.
  bool unchanged_since_last_answer() const {
    if (holds_changed_ || !asked_stamp_ || world_.now() >= answer_until_ || !use_stamp_) {
      return false;
    }
    // Pair of the stamp taken in ask(): the same source both times.
    if (stamp_is_world_count_) return world_.state_changes() == *asked_stamp_;
    const std::optional<uint64_t> stamp = deployment_.lock_state_stamp();
    return stamp && *stamp == *asked_stamp_;
  }
  void wake_at(TimePoint at);
  // Whether a wake-up already asked for, still ahead, comes no later than
  // `at`: it looks again first, so a wake-up at `at` adds nothing.
  bool wake_stands_for(TimePoint at) const { return wake_ > world_.now() && wake_ <= at; }

  sim::World& world_;
  sim::Deployment& deployment_;
  sim::LockProbe probe_;
  Holders holders_;
  std::vector<Holder> holding_;  // look()'s buffer
  bool watching_ = false;
  bool supported_ = true;
  bool use_stamp_ = true;
  bool stamp_is_world_count_ = false;  // Deployment::lock_state_stamp_is_world_count
  TimePoint wake_ = TimePoint{};       // the earliest wake-up asked for, if still ahead
  int64_t samples_ = 0;
  // What look() last asked and heard: the backend's stamp then (nullopt:
  // none, or nothing asked yet) and the answer's `until`; whether a hold
  // began or ended since.
  std::optional<uint64_t> asked_stamp_;
  TimePoint answer_until_ = TimePoint{};
  bool holds_changed_ = true;
  // Per held interval (client, acquire index): its open window's start and
  // whether its holder believed it held when the window opened.
  std::map<std::pair<int, int64_t>, std::pair<TimePoint, bool>> open_;
  std::vector<checkers::ExposureWindow> closed_;
};

}  // namespace locksim::harness
