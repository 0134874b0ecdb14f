// The World: virtual time, the event heap, the fibers, and who may run when.
//
// Everything in a simulation happens either in an event (a callback the World
// runs on the main context at its virtual time) or in a client fiber between
// two blocking calls. The main loop lets every ready fiber run until it
// blocks, then pops the next event and advances time to it. Fibers block only
// through block()/sleep() here, never on Boost's timed waits (those spin on the
// real steady clock), so the whole run is a function of the seed.
#pragma once

#include <boost/fiber/fiber.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "env/assert.h"
#include "env/time.h"
#include "sim/change_count.h"
#include "sim/event_queue.h"
#include "sim/rng.h"
#include "sim/scheduler.h"

namespace locksim::sim {

class Node;

// Thrown out of a blocking call when the World tears a fiber down: the run
// ended, or the fiber's node crashed. Fiber code must let it propagate; the
// fiber wrapper catches it.
class Cancelled : public std::exception {
 public:
  const char* what() const noexcept override { return "fiber cancelled"; }
};

struct FiberRecord;

// One thing a fiber is waiting for. Owned by whoever will signal it (for an
// RPC, a shared state the network events also hold), so a late signal after
// the fiber gave up is harmless.
struct Waiter {
  FiberRecord* fiber = nullptr;  // set while a fiber is blocked on it
  bool signaled = false;
};

struct WorldOptions {
  uint64_t seed = 1;
  SchedulePolicy policy = SchedulePolicy::kSeeded;
  // Upper bound on executed events, so a runaway schedule ends (Tiger Style).
  uint64_t max_events = 500'000'000;
  size_t fiber_stack_bytes = 256 * 1024;
};

class World {
 public:
  explicit World(WorldOptions options);
  ~World();  // shuts down first if the owner did not
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  TimePoint now() const { return now_; }
  Rng& rng() { return rng_; }  // the root stream: split it at setup only
  uint64_t events_executed() const { return events_; }
  // Changes so far to the state a lock's store answers from: every
  // ChangeCount attached here (count_changes_of) adds its bumps. Only ever
  // grows; compared for equality, never read as a quantity
  // (Deployment::lock_state_stamp).
  uint64_t state_changes() const { return state_changes_; }
  void count_changes_of(ChangeCount& count) { count.attach(&state_changes_); }

  // Runs `action` on the main context at virtual time `at`. Asserted: `at`
  // is not before now() (nothing is scheduled in the past) and the World is
  // not shut down.
  // Inline: every message and timer of a run passes here.
  void at(TimePoint when, EventQueue::Action&& action) {
    check_schedulable(when);
    queue_.push(when, std::move(action));
  }
  void after(Duration d, EventQueue::Action&& action) { at(now_ + d, std::move(action)); }
  // As after(), for a duration used again and again (a client's timeout, a
  // server's service time): the event waits in its duration's FIFO lane
  // rather than the heap (sim/event_queue.h). Events run in the same order
  // as after() would run them; only the heap stays small.
  void after_fixed(Duration d, EventQueue::Action&& action) {
    check_schedulable(now_ + d);
    queue_.push_fixed(now_ + d, d, std::move(action));
  }

  // Starts a fiber on `node` (may be null for fibers outside any node). An
  // exception escaping `body` is recorded in errors(), never std::terminate.
  // Precondition (asserted): not shut down, and `node` is not crashed.
  void spawn(std::string name, Node* node, std::function<void()> body);
  // The same for a task of the node's process beside its work (a library's
  // timer): a pause or crash of the node stops it, a hang does not.
  void spawn_task(std::string name, Node* node, std::function<void()> body);

  // --- Callable only from a fiber spawned by this World (asserted). ---
  // Blocks until `w` is signalled. Throws Cancelled if the fiber is cancelled.
  // One fiber per waiter and one waiter per fiber at a time (asserted).
  void block(Waiter& w);
  // Blocks for d of virtual time (d >= 0).
  void sleep(Duration d);

  // Signals `w` and makes its fiber ready, unless its node is paused, in which
  // case the wake is held until the node resumes (a GC pause freezes fibers).
  // Safe to call on a waiter nobody is blocked on.
  void signal(Waiter& w);

  // Cancels every fiber running on `node` (a crash): each throws Cancelled
  // out of its current or next blocking call. Precondition (asserted): the
  // node is crashed.
  void cancel_fibers_of(const Node& node);
  // Called by a node when it resumes from a pause or is unhung: delivers the
  // held wakes of the fibers no longer frozen. Precondition (asserted): the
  // node is running.
  void release_held_wakes(const Node& node);

  // Runs events and fibers until virtual time would pass `end` or no event
  // is left, then sets now() to `end` (unless the event limit or the poll
  // stopped it). Precondition: end >= now(). Virtual time never goes back
  // (asserted per event), and main runs only when no client fiber is ready.
  void run_until(TimePoint end);

  // Asks `poll` between two events, once every `every_events` events (> 0):
  // false stops run_until there, now() at the last event run, and stopped()
  // says so from then on. For a caller outside the simulation (a command's
  // progress line, its Ctrl-C); `poll` must not touch the World, so the
  // events run up to the stop are those an unpolled run runs.
  void set_poll(uint64_t every_events, std::function<bool()> poll);
  bool stopped() const { return stopped_; }
  // Brings the next poll forward to the end of the event running now. For
  // a model whose one event can take long in real time (a Lua script run to
  // its instruction limit): thousands of such events could pass before the
  // next poll, and a Ctrl-C would wait for them. Changes no event; without
  // a poll (set_poll), nothing.
  void poll_after_this_event() {
    if (poll_every_ > 0) look_up_at_ = std::min(look_up_at_, events_);
  }
  // The World of this thread (one at a time: SimScheduler::attach), or
  // nullptr: for a model that knows no World, such as a Redis server's Lua.
  static World* of_this_thread();

  // Cancels and joins every fiber. Idempotent; the destructor calls it too.
  void shutdown();

  // Who hears of a crash besides the node's owner: the network, which resets
  // the crashed process's connections. One observer; empty to clear.
  void set_crash_observer(std::function<void(const Node&)> observer) {
    crash_observer_ = std::move(observer);
  }
  // Called by Node::crash after the node is marked crashed (asserted there).
  void node_crashed(const Node& node) {
    if (crash_observer_) crash_observer_(node);
  }

  // Who look at the state after every event (and the fibers it woke) has
  // run: the exposure monitor, and the lock tracer of an explained run. Each
  // must only read — no signals, no random draws, no events but the
  // exposure monitor's own no-op wake-ups — so a run is the same with or
  // without them. Called in the order added; each stays as long as the World
  // runs, so it must outlive run_until.
  // A Callback, not a std::function: it is called after every event of a
  // run, and a std::function's call is two indirect jumps.
  void add_event_observer(Callback&& observer) {
    LOCKSIM_ASSERT(observer != nullptr);
    event_observers_.push_back(std::move(observer));
  }

  const std::vector<std::string>& errors() const { return errors_; }
  void record_error(std::string e) { errors_.push_back(std::move(e)); }

 private:
  // What at() and after_fixed() assert of an event's time and the World.
  void check_schedulable(TimePoint when) const {
    LOCKSIM_ASSERT_MSG(when >= now_, "an event scheduled in the past");
    LOCKSIM_ASSERT_MSG(!shut_down_, "an event scheduled after shutdown");
  }
  FiberRecord& current();
  void wake_now(FiberRecord& f);
  // A GC pause freezes every fiber of a node; a hang, its work fibers only.
  static bool frozen(const FiberRecord& f);
  void drain_ready_fibers();

  WorldOptions options_;
  Rng rng_;
  Rng schedule_rng_;
  SimScheduler& scheduler_;
  TimePoint now_{};
  EventQueue queue_;
  uint64_t events_ = 0;
  // The event count at which run_until next looks up from its loop: the
  // event limit, or the next poll if sooner. One compare an event for both.
  uint64_t look_up_at_ = 0;
  uint64_t poll_every_ = 0;  // 0: no poll
  std::function<bool()> poll_;
  bool stopped_ = false;        // see stopped()
  uint64_t state_changes_ = 0;  // see state_changes()
  bool shut_down_ = false;
  std::vector<std::unique_ptr<FiberRecord>> fibers_;  // creation order
  FiberRecord* running_ = nullptr;                    // the fiber that ran last (current())
  // Lookup only (never iterated), so pointer order cannot leak into behaviour.
  std::unordered_map<const boost::fibers::context*, FiberRecord*> by_context_;
  std::vector<std::string> errors_;
  std::function<void(const Node&)> crash_observer_;
  std::vector<Callback> event_observers_;
};

struct FiberRecord {
  std::string name;
  Node* node = nullptr;
  boost::fibers::fiber fiber;
  boost::fibers::context* context = nullptr;
  Waiter* blocked_on = nullptr;
  bool cancelled = false;
  bool wake_held = false;  // signalled while its node was paused (or hung, for work)
  bool task = false;       // a task of its node's process (spawn_task): a hang does not stop it
  bool scheduled = false;  // handed to the scheduler, not yet resumed
  bool finished = false;
  Waiter sleep_waiter;  // World::sleep's, reused by each sleep
  uint64_t sleeps = 0;  // sleeps begun: the current one's number
};

}  // namespace locksim::sim
