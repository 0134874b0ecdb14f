// A Boost.Fiber scheduling algorithm that makes the interleaving of client
// fibers a pure function of the seed.
//
// Boost's round_robin is deterministic too, but it lets the dispatcher and the
// main context compete with client fibers, and it can only ever run FIFO. Here
// client ("worker") fibers always run before the dispatcher and main, and the
// next worker is chosen FIFO or by a seeded draw, so different seeds explore
// different interleavings and the same seed replays one exactly.
//
// One instance is installed per thread (Boost allows one algorithm per thread
// and keeps it for the thread's life); each World attaches its policy and RNG
// while it runs.
#pragma once

#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/context.hpp>

#include <cstddef>
#include <type_traits>
#include <vector>

#include "sim/rng.h"

namespace locksim::sim {

namespace detail {
// The time-point type of algorithm::suspend_until, taken from Boost's own
// declaration: we must override it, but the simulation never reads that clock.
template <class>
struct SecondArg;
template <class C, class A>
struct SecondArg<void (C::*)(A) noexcept> {
  using type = A;
};
using SuspendTimePoint = SecondArg<decltype(&boost::fibers::algo::algorithm::suspend_until)>::type;
}  // namespace detail

enum class SchedulePolicy { kFifo, kSeeded };

class SimScheduler final : public boost::fibers::algo::algorithm {
 public:
  SimScheduler();
  ~SimScheduler() override;

  // The scheduler of the calling thread, installing it on first use.
  // Precondition: no fiber has been launched on this thread under another algorithm.
  static SimScheduler& for_this_thread();

  // Seeded choice draws from `rng` (which the caller keeps alive until
  // detach); FIFO ignores it. One World attaches at a time (asserted):
  // attach and detach come in pairs.
  void attach(SchedulePolicy policy, Rng* rng);
  void detach();

  bool has_ready_workers() const { return !workers_.empty(); }
  // A client fiber is about to end: let the dispatcher free it at the next
  // chance (see pick_next).
  void fiber_ending() { release_pending_ = true; }
  uint64_t switches() const { return switches_; }
  // The context pick_next() last handed over: the one running now, since
  // every switch of this thread goes through pick_next (null before the first).
  boost::fibers::context* running() const { return running_; }

  void awakened(boost::fibers::context* ctx) noexcept override;
  boost::fibers::context* pick_next() noexcept override;
  bool has_ready_fibers() const noexcept override;
  void suspend_until(detail::SuspendTimePoint) noexcept override;
  void notify() noexcept override;

 private:
  // Ready client fibers, in the order they became ready. A vector: it holds
  // a handful (at most one per client), so erasing from the middle is cheap
  // and the double-scheduling check in awakened() is a short scan.
  std::vector<boost::fibers::context*> workers_;
  boost::fibers::context* main_ = nullptr;
  boost::fibers::context* dispatcher_ = nullptr;
  SchedulePolicy policy_ = SchedulePolicy::kFifo;
  Rng* rng_ = nullptr;
  bool attached_ = false;
  bool release_pending_ = false;
  uint64_t switches_ = 0;
  boost::fibers::context* running_ = nullptr;
};

}  // namespace locksim::sim
