#include "sim/world.h"

#include <boost/context/detail/exception.hpp>
#include <boost/fiber/fixedsize_stack.hpp>
#include <boost/fiber/operations.hpp>

#include <cassert>

#include "sim/node.h"

namespace locksim::sim {

World::World(WorldOptions options)
    : options_(options),
      rng_(options.seed),
      schedule_rng_(rng_.split("scheduler")),
      scheduler_(SimScheduler::for_this_thread()) {
  scheduler_.attach(options_.policy, &schedule_rng_);
}

World::~World() {
  shutdown();
  scheduler_.detach();
}

void World::at(TimePoint when, EventQueue::Action action) {
  assert(when >= now_);
  queue_.push(when, std::move(action));
}

void World::spawn(std::string name, Node* node, std::function<void()> body) {
  assert(!shut_down_);
  auto record = std::make_unique<FiberRecord>();
  record->name = std::move(name);
  record->node = node;
  FiberRecord* r = record.get();
  fibers_.push_back(std::move(record));
  r->fiber = boost::fibers::fiber(std::allocator_arg,
                                  boost::fibers::fixedsize_stack(options_.fiber_stack_bytes),
                                  [this, r, body = std::move(body)] {
                                    r->context = boost::fibers::context::active();
                                    by_context_[r->context] = r;
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
                                    r->finished = true;
                                  });
}

FiberRecord& World::current() {
  auto it = by_context_.find(boost::fibers::context::active());
  assert(it != by_context_.end() && "blocking call outside a World fiber");
  return *it->second;
}

void World::block(Waiter& w) {
  FiberRecord& f = current();
  if (f.cancelled) throw Cancelled();
  if (w.signaled) return;
  w.fiber = &f;
  f.blocked_on = &w;
  // Loop: only signal() or cancellation makes us ready, but be robust to a
  // spurious resume.
  while (!w.signaled && !f.cancelled) {
    f.context->suspend();
    f.scheduled = false;
  }
  w.fiber = nullptr;
  f.blocked_on = nullptr;
  if (f.cancelled) throw Cancelled();
}

void World::sleep(Duration d) {
  assert(d >= Duration::zero());
  auto w = std::make_shared<Waiter>();
  at(now_ + d, [this, w] { signal(*w); });
  block(*w);
}

void World::signal(Waiter& w) {
  if (w.signaled) return;
  w.signaled = true;
  FiberRecord* f = w.fiber;
  if (f == nullptr) return;  // nobody blocked (yet, or any more)
  if (f->node != nullptr && f->node->paused()) {
    f->wake_held = true;
    return;
  }
  wake_now(*f);
}

void World::wake_now(FiberRecord& f) {
  if (f.context == nullptr || f.finished || f.blocked_on == nullptr || f.scheduled) return;
  f.scheduled = true;
  boost::fibers::context::active()->schedule(f.context);
}

void World::release_held_wakes(const Node& node) {
  for (auto& f : fibers_) {  // creation order: deterministic
    if (f->node == &node && f->wake_held) {
      f->wake_held = false;
      wake_now(*f);
    }
  }
}

void World::cancel_fibers_of(const Node& node) {
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
}

void World::run_until(TimePoint end) {
  drain_ready_fibers();
  while (!queue_.empty() && queue_.next_time() <= end) {
    if (events_ >= options_.max_events) {
      record_error("event limit reached (" + std::to_string(options_.max_events) + " events)");
      return;
    }
    EventQueue::Event e = queue_.pop();
    now_ = e.at;
    ++events_;
    e.action();
    drain_ready_fibers();
  }
  if (now_ < end) now_ = end;
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
  }
  queue_.clear();  // events may hold state owned by fibers' callers
}

}  // namespace locksim::sim
