// A background task's "stop now": set by its owner, waited on by the task
// (Env::sleep_unless_stopped).
//
// Why a task must be woken, not left to notice at its next wake: Redisson
// cancels a released lock's renewal timer at unlock. A watchdog that slept
// through its period instead outlived its lock by up to a period (10 s at
// the default watchdog timeout), so a client that took and released its
// lock more than a handful of times a period (short holds, a failover's
// quick retries) had more than a process's task limit alive at once: the
// simulation stopped on a broken invariant (`locksim sweep --duration 60s`
// on redisson-fenced, seeds 73 and 185).
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <utility>

namespace locksim {

class TaskStop {
 public:
  // Sets the flag and wakes the task waiting in Env::sleep_unless_stopped,
  // if one waits. Any thread; idempotent.
  void request() {
    requested_.store(true);
    std::function<void()> wake;
    {
      const std::lock_guard<std::mutex> hold(mu_);
      wake = std::move(waker_);
      waker_ = nullptr;
    }
    if (wake) wake();
  }
  bool requested() const { return requested_.load(); }

  // For an Env's sleep_unless_stopped only: what request() calls to wake
  // the waiting task, set before it blocks and cleared (nullptr) when it
  // stops waiting; called at most once per setting.
  void set_waker(std::function<void()> waker) {
    const std::lock_guard<std::mutex> hold(mu_);
    waker_ = std::move(waker);
  }

 private:
  std::atomic<bool> requested_{false};  // live mode sets it from another thread
  std::mutex mu_;                       // guards waker_
  std::function<void()> waker_;
};

}  // namespace locksim
