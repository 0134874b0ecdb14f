#include "sim/scheduler.h"

#include <boost/fiber/operations.hpp>

#include <algorithm>
#include <utility>

#include "env/assert.h"

namespace locksim::sim {

namespace {
thread_local SimScheduler* g_scheduler = nullptr;
}

SimScheduler::SimScheduler() {
  LOCKSIM_ASSERT_MSG(g_scheduler == nullptr, "two SimSchedulers on one thread");
  g_scheduler = this;
}
SimScheduler::~SimScheduler() {
  if (g_scheduler == this) g_scheduler = nullptr;
}

SimScheduler& SimScheduler::for_this_thread() {
  if (g_scheduler == nullptr) boost::fibers::use_scheduling_algorithm<SimScheduler>();
  LOCKSIM_ASSERT(g_scheduler != nullptr);
  return *g_scheduler;
}

void SimScheduler::attach(SchedulePolicy policy, Rng* rng) {
  LOCKSIM_ASSERT_MSG(policy == SchedulePolicy::kFifo || rng != nullptr,
                     "a seeded schedule needs its stream");
  // One World per thread at a time: two would share this ready pool, and
  // one World's main loop would run the other's fibers.
  LOCKSIM_ASSERT_MSG(!attached_, "a second World attached on this thread");
  attached_ = true;
  policy_ = policy;
  rng_ = rng;
}

void SimScheduler::detach() {
  LOCKSIM_ASSERT(attached_);
  attached_ = false;
  policy_ = SchedulePolicy::kFifo;
  rng_ = nullptr;
}

void SimScheduler::awakened(boost::fibers::context* ctx) noexcept {
  // Main and dispatcher are kept out of the pool: they run only when no
  // client fiber is ready, so time never advances under a runnable client.
  if (ctx->is_context(boost::fibers::type::main_context)) {
    LOCKSIM_ASSERT_MSG(main_ == nullptr, "main scheduled twice");
    main_ = ctx;
  } else if (ctx->is_context(boost::fibers::type::dispatcher_context)) {
    LOCKSIM_ASSERT_MSG(dispatcher_ == nullptr, "dispatcher scheduled twice");
    dispatcher_ = ctx;
  } else {
    // O(ready fibers): a handful, at most one per client.
    LOCKSIM_ASSERT_MSG(std::find(workers_.begin(), workers_.end(), ctx) == workers_.end(),
                       "a fiber scheduled twice");
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
    // The pool holds only client fibers (awakened() keeps the others apart).
    LOCKSIM_ASSERT_MSG(!ctx->is_context(boost::fibers::type::main_context) &&
                           !ctx->is_context(boost::fibers::type::dispatcher_context),
                       "main or dispatcher in the worker pool");
    return running_ = ctx;
  }
  // The dispatcher frees the stacks of finished fibers, then hands over to
  // main, which advances virtual time. It runs first only when a fiber has
  // ended (or main is not ready): otherwise each return to main would cost a
  // second switch and a real clock read (Boost's dispatcher checks its timer
  // queue, which the simulation never uses) for nothing to free.
  if (dispatcher_ != nullptr && (release_pending_ || main_ == nullptr)) {
    release_pending_ = false;
    return running_ = std::exchange(dispatcher_, nullptr);
  }
  if (main_ != nullptr) return running_ = std::exchange(main_, nullptr);
  return nullptr;
}

bool SimScheduler::has_ready_fibers() const noexcept {
  return !workers_.empty() || main_ != nullptr || dispatcher_ != nullptr;
}

void SimScheduler::suspend_until(detail::SuspendTimePoint) noexcept {
  // Nothing is ready and nothing can become ready: every fiber, main
  // included, waits on something only the World can signal, and the World
  // runs on main. That is a deadlock in locksim's own code: a broken
  // invariant, reported as one (exit 70, with the run's seed) in every build
  // -- returning would spin.
  ::locksim::assertion_failed("has_ready_fibers()", "simulation deadlock: no runnable fiber",
                              __FILE__, __LINE__);
}

void SimScheduler::notify() noexcept {}

}  // namespace locksim::sim
