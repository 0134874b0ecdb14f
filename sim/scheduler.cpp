#include "sim/scheduler.h"

#include <boost/fiber/operations.hpp>

#include <cstdio>
#include <cstdlib>

namespace locksim::sim {

namespace {
thread_local SimScheduler* g_scheduler = nullptr;
}

SimScheduler::SimScheduler() {
  g_scheduler = this;
}
SimScheduler::~SimScheduler() {
  if (g_scheduler == this) g_scheduler = nullptr;
}

SimScheduler& SimScheduler::for_this_thread() {
  if (g_scheduler == nullptr) boost::fibers::use_scheduling_algorithm<SimScheduler>();
  return *g_scheduler;
}

void SimScheduler::attach(SchedulePolicy policy, Rng* rng) {
  policy_ = policy;
  rng_ = rng;
}

void SimScheduler::detach() {
  policy_ = SchedulePolicy::kFifo;
  rng_ = nullptr;
}

void SimScheduler::awakened(boost::fibers::context* ctx) noexcept {
  // Main and dispatcher are kept out of the pool: they run only when no
  // client fiber is ready, so time never advances under a runnable client.
  if (ctx->is_context(boost::fibers::type::main_context)) {
    main_ = ctx;
  } else if (ctx->is_context(boost::fibers::type::dispatcher_context)) {
    dispatcher_ = ctx;
  } else {
    workers_.push_back(ctx);
  }
}

boost::fibers::context* SimScheduler::pick_next() noexcept {
  ++switches_;
  if (!workers_.empty()) {
    size_t i = 0;
    if (policy_ == SchedulePolicy::kSeeded && rng_ != nullptr && workers_.size() > 1) {
      i = static_cast<size_t>(rng_->below(workers_.size()));
    }
    boost::fibers::context* ctx = workers_[i];
    workers_.erase(workers_.begin() + static_cast<std::ptrdiff_t>(i));
    return ctx;
  }
  // The dispatcher before main: it frees the stacks of finished fibers, then
  // hands over to main, which advances virtual time.
  if (dispatcher_ != nullptr) return std::exchange(dispatcher_, nullptr);
  if (main_ != nullptr) return std::exchange(main_, nullptr);
  return nullptr;
}

bool SimScheduler::has_ready_fibers() const noexcept {
  return !workers_.empty() || main_ != nullptr || dispatcher_ != nullptr;
}

void SimScheduler::suspend_until(detail::SuspendTimePoint) noexcept {
  // Nothing is ready and nothing can become ready: every fiber, main
  // included, waits on something only the World can signal, and the World
  // runs on main. That is a deadlock in locksim's own code; fail loudly
  // rather than spin.
  std::fputs("locksim: internal error: simulation deadlock (no runnable fiber)\n", stderr);
  std::abort();
}

void SimScheduler::notify() noexcept {}

}  // namespace locksim::sim
