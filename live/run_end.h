// The end of a live run, as the sleeps of a client's thread see it.
//
// The simulation stops its World at the run's end: a client asleep then (a
// hold, a retry pause) never wakes, and an op in flight never completes
// (harness/simulation.cpp). Live clients are real threads, so the runner
// (live/live_runner.cpp) sets the run's end on each client's thread, and
// every live Env's sleep ends there instead of sleeping on: the client then
// stops where it stands (ClientAbandoned, live/client_freeze.h) and records
// nothing more, so a live run lasts its --duration plus at most one command
// in flight (bounded by the command, lock-wait or session timeout), not
// --duration plus a hold.
//
// Why a thread-local: the Env is built by each backend's make_env, and its
// sleep runs on the client's own thread; a task's thread (a watchdog) has
// no end set and sleeps as asked, ending when its client's Env goes.
#pragma once

#include <algorithm>
#include <chrono>

namespace locksim::live {

namespace run_end_detail {
inline thread_local std::chrono::steady_clock::time_point t_run_end =
    std::chrono::steady_clock::time_point::max();
}  // namespace run_end_detail

// The calling thread runs a client of a run that ends at `end`.
inline void set_thread_run_end(std::chrono::steady_clock::time_point end) {
  run_end_detail::t_run_end = end;
}

// A sleep of `d` cut at the calling thread's run end: how long to sleep,
// and whether the run ends before the sleep would (then the caller throws
// ClientAbandoned after sleeping `d`).
struct RunEndCut {
  std::chrono::nanoseconds d;
  bool run_ends = false;
};
inline RunEndCut cut_at_run_end(std::chrono::nanoseconds d) {
  const auto end = run_end_detail::t_run_end;
  if (end == std::chrono::steady_clock::time_point::max()) return {d, false};
  const auto left = std::max<std::chrono::nanoseconds>(end - std::chrono::steady_clock::now(),
                                                       std::chrono::nanoseconds::zero());
  if (d < left) return {d, false};
  return {left, true};
}

}  // namespace locksim::live
