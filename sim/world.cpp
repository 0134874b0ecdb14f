#include "sim/world.h"

#include <boost/context/detail/exception.hpp>
#include <boost/fiber/operations.hpp>

#include <algorithm>
#include <optional>

#include "env/assert.h"
#include "sim/node.h"
#include "sim/stack_pool.h"

namespace locksim::sim {

namespace {
thread_local World* g_world = nullptr;  // see of_this_thread()
}

World* World::of_this_thread() {
  return g_world;
}

World::World(WorldOptions options)
    : options_(options),
      rng_(options.seed),
      schedule_rng_(rng_.split("scheduler")),
      scheduler_(SimScheduler::for_this_thread()) {
  look_up_at_ = options_.max_events;  // no poll until set_poll
  scheduler_.attach(options_.policy, &schedule_rng_);
  LOCKSIM_ASSERT_MSG(g_world == nullptr, "attach allows one World per thread");
  g_world = this;
}

World::~World() {
  shutdown();
  scheduler_.detach();
  LOCKSIM_ASSERT(g_world == this);
  g_world = nullptr;
}

void World::spawn_task(std::string name, Node* node, std::function<void()> body) {
  spawn(std::move(name), node, std::move(body));
  fibers_.back()->task = true;  // not started yet: it runs once the caller blocks
}

void World::spawn(std::string name, Node* node, std::function<void()> body) {
  LOCKSIM_ASSERT_MSG(!shut_down_, "a fiber spawned after shutdown");
  LOCKSIM_ASSERT_MSG(node == nullptr || !node->crashed(), "a fiber spawned on a crashed node");
  auto record = std::make_unique<FiberRecord>();
  record->name = std::move(name);
  record->node = node;
  FiberRecord* r = record.get();
  fibers_.push_back(std::move(record));
  r->fiber = boost::fibers::fiber(std::allocator_arg, PooledStack(options_.fiber_stack_bytes),
                                  [this, r, body = std::move(body)] {
                                    r->context = boost::fibers::context::active();
                                    running_ = r;
                                    const bool fresh = by_context_.emplace(r->context, r).second;
                                    LOCKSIM_ASSERT_MSG(fresh, "two fibers share one context");
                                    try {
                                      if (!r->cancelled) body();
                                    } catch (const Cancelled&) {
                                      // The normal way out of a torn-down fiber.
                                    } catch (const boost::context::detail::forced_unwind&) {
                                      throw;  // Boost's own stack unwinding: must pass through
                                    } catch (const std::exception& e) {
                                      record_error(r->name + ": " + e.what());
                                    } catch (...) {
                                      record_error(r->name + ": unknown exception");
                                    }
                                    by_context_.erase(r->context);
                                    LOCKSIM_ASSERT(r->blocked_on == nullptr);
                                    r->finished = true;
                                    scheduler_.fiber_ending();
                                  });
}

FiberRecord& World::current() {
  // A fiber starts running only at its start and on a return from suspend()
  // in block(): both set running_, so no lookup is needed; the context check
  // keeps that claim honest on every call. The scheduler's record of what it
  // resumed, not context::active(): that one is a thread-local of Boost's
  // shared library, read through __tls_get_addr (3-5 % of a run).
  LOCKSIM_ASSERT_MSG(running_ != nullptr && running_->context == scheduler_.running(),
                     "blocking call outside a World fiber");
  return *running_;
}

void World::block(Waiter& w) {
  FiberRecord& f = current();
  if (f.cancelled) throw Cancelled();
  if (w.signaled) return;
  // One fiber per waiter, one waiter per fiber, and a running fiber is not
  // in the ready pool.
  LOCKSIM_ASSERT_MSG(w.fiber == nullptr && f.blocked_on == nullptr && !f.scheduled,
                     "a fiber blocked twice");
  w.fiber = &f;
  f.blocked_on = &w;
  // wake_now is the one door into the ready pool, and only a signal or a
  // cancellation opens it: a resume always finds one of them, so this loop
  // runs once (asserted), never spins.
  while (!w.signaled && !f.cancelled) {
    f.context->suspend();
    running_ = &f;
    LOCKSIM_ASSERT_MSG(f.scheduled && (w.signaled || f.cancelled),
                       "a blocked fiber resumed without a reason");
    f.scheduled = false;
  }
  w.fiber = nullptr;
  f.blocked_on = nullptr;
  if (f.cancelled) throw Cancelled();
}

void World::sleep(Duration d) {
  LOCKSIM_ASSERT_MSG(d >= Duration::zero(), "a negative sleep");
  // The fiber's own sleep waiter, not one allocated per sleep. A sleep ends
  // only by its timer or by cancellation, and a cancelled fiber never sleeps
  // again, so the count keeps a stale timer from waking a later sleep.
  FiberRecord& f = current();
  f.sleep_waiter.signaled = false;
  const uint64_t sleep = ++f.sleeps;
  FiberRecord* fp = &f;
  at(now_ + d, [this, fp, sleep] {
    if (fp->sleeps == sleep) signal(fp->sleep_waiter);
  });
  block(f.sleep_waiter);
}

void World::signal(Waiter& w) {
  if (w.signaled) return;
  w.signaled = true;
  FiberRecord* f = w.fiber;
  if (f == nullptr) return;  // nobody blocked (yet, or any more)
  LOCKSIM_ASSERT_MSG(f->blocked_on == &w, "a waiter's fiber is blocked on something else");
  if (frozen(*f)) {
    f->wake_held = true;
    return;
  }
  wake_now(*f);
}

bool World::frozen(const FiberRecord& f) {
  return f.node != nullptr && (f.node->paused() || (f.node->hung() && !f.task));
}

void World::wake_now(FiberRecord& f) {
  if (f.context == nullptr || f.finished || f.blocked_on == nullptr || f.scheduled) return;
  // A GC pause freezes fibers: only cancellation may wake one on a paused node.
  LOCKSIM_ASSERT_MSG(!frozen(f) || f.cancelled, "a fiber of a paused or hung node made ready");
  f.scheduled = true;
  // What context::active()->schedule(f.context) does for a fiber of this
  // thread, without the thread-local read (see current()).
  LOCKSIM_ASSERT(f.context->get_scheduler() != nullptr);
  f.context->get_scheduler()->schedule(f.context);
}

void World::release_held_wakes(const Node& node) {
  LOCKSIM_ASSERT_MSG(node.running(), "held wakes released on a node that is not running");
  for (auto& f : fibers_) {  // creation order: deterministic
    if (f->node == &node && f->wake_held && !frozen(*f)) {
      f->wake_held = false;
      wake_now(*f);
    }
  }
}

void World::cancel_fibers_of(const Node& node) {
  LOCKSIM_ASSERT_MSG(node.crashed(), "fibers cancelled on a node that did not crash");
  for (auto& f : fibers_) {
    if (f->node == &node && !f->finished) {
      f->cancelled = true;
      f->wake_held = false;
      wake_now(*f);
    }
  }
}

void World::drain_ready_fibers() {
  // Main yields once: the scheduler runs every ready client fiber (and any
  // they make ready) before it returns to main.
  if (scheduler_.has_ready_workers()) boost::this_fiber::yield();
  // Main runs again only once no client fiber is ready (SimScheduler's
  // rule), so time never advances under a runnable fiber.
  LOCKSIM_ASSERT_MSG(!scheduler_.has_ready_workers(), "main resumed while a fiber was ready");
}

// A schedule that runs this many events in a row at one instant has stopped
// virtual time: a zero-latency network with zero-length holds or retry
// pauses lets a client loop without time passing, and its history would
// grow until memory ran out. A real run has at most a few thousand events
// at one instant (every client and server woken at once).
constexpr uint64_t kEventsAtOneInstantMax = 1'000'000;

void World::run_until(TimePoint end) {
  LOCKSIM_ASSERT_MSG(end >= now_, "run_until a time already past");
  drain_ready_fibers();
  uint64_t at_this_instant = 0;  // events run in a row at now_
  LOCKSIM_ASSERT_MSG(!stopped_, "run_until after the poll stopped the run");
  for (;;) {
    if (events_ >= look_up_at_) {
      if (events_ >= options_.max_events) {
        // Only an event that would run is over the limit (it stays queued).
        if (queue_.empty() || end < queue_.next_time()) break;
        record_error("event limit reached (" + std::to_string(options_.max_events) + " events)");
        return;
      }
      LOCKSIM_ASSERT(poll_every_ > 0);
      look_up_at_ = std::min(options_.max_events, events_ + poll_every_);
      if (!poll_()) {
        stopped_ = true;
        return;
      }
    }
    std::optional<EventQueue::Event> e = queue_.pop_due(end);
    if (!e) break;
    LOCKSIM_ASSERT_MSG(e->at >= now_, "virtual time went back");
    at_this_instant = e->at == now_ ? at_this_instant + 1 : 0;
    if (at_this_instant >= kEventsAtOneInstantMax) {
      record_error("virtual time stopped at " + std::to_string(now_.ns / 1'000'000) +
                   " ms: " + std::to_string(kEventsAtOneInstantMax) +
                   " events in a row at that instant (a zero-latency network with zero-length "
                   "holds or retry pauses lets a client loop in no time; give --latency-base a "
                   "positive duration)");
      return;
    }
    now_ = e->at;
    ++events_;
    e->action();
    drain_ready_fibers();
    for (Callback& observe : event_observers_) observe();
  }
  if (now_ < end) now_ = end;
}

void World::set_poll(uint64_t every_events, std::function<bool()> poll) {
  LOCKSIM_ASSERT_MSG(every_events > 0 && poll != nullptr, "a poll needs a period and a body");
  poll_every_ = every_events;
  poll_ = std::move(poll);
  look_up_at_ = std::min(options_.max_events, events_ + poll_every_);
}

void World::shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  for (auto& f : fibers_) {
    if (!f->finished) {
      f->cancelled = true;
      f->wake_held = false;
      wake_now(*f);
    }
  }
  for (auto& f : fibers_) {
    if (f->fiber.joinable()) f->fiber.join();
    LOCKSIM_ASSERT_MSG(f->finished, "a joined fiber did not finish");
  }
  LOCKSIM_ASSERT_MSG(by_context_.empty(), "a fiber outlived shutdown");
  queue_.clear();  // events may hold state owned by fibers' callers
}

}  // namespace locksim::sim
