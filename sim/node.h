// A simulated machine: a name, a local clock, and a state.
//
//   running  — fibers run, messages are handled on arrival;
//   paused   — a GC pause or SIGSTOP: its fibers are frozen (wakes are held),
//              its clock keeps running, messages to it queue;
//   crashed  — its fibers are cancelled, messages to it are dropped, and its
//              owner decides what survives (on_crash); restart() brings it
//              back and lets the owner rebuild (on_restart).
//
// Apart from the state, a node may be hung: its work fibers (a client's
// critical section or its wait) are frozen as by a pause, while its task
// fibers (World::spawn_task: a library's timer, Redisson's watchdog) and
// its messages go on. A crash ends a hang.
//
// Allowed transitions (transition_allowed, asserted on every change):
//   running <-> paused,  running/paused -> crashed,  crashed -> running.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <string>

#include "sim/callback.h"
#include "sim/clock.h"

namespace locksim::sim {

class World;

class Node {
 public:
  enum class State { kRunning, kPaused, kCrashed };

  Node(World& world, std::string name, Duration clock_offset = Duration::zero());
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  const std::string& name() const { return name_; }
  State state() const { return state_; }
  bool running() const { return state_ == State::kRunning; }
  bool paused() const { return state_ == State::kPaused; }
  bool crashed() const { return state_ == State::kCrashed; }

  // The node's own view of the time.
  TimePoint local_now() const;
  LocalClock& clock() { return clock_; }

  // Hands a message to the node: handled now if running, queued if paused,
  // dropped if crashed (the sender's timeout covers it).
  void deliver(Callback&& message);

  // Fault requests. Each changes the state only along an allowed transition
  // (pause: running -> paused; resume: paused -> running; crash: running or
  // paused -> crashed; restart: crashed -> running) and otherwise does
  // nothing: a fault schedule is user input and may overlap two faults on one
  // node (a pause that ends after a crash, a second crash before the first
  // restart), which is not a bug. The nemesis should skip such requests
  // itself (and log that it did); then these can assert their prior state, as
  // TigerBeetle's cluster does.
  void pause();
  void resume();
  void crash();
  void restart();
  // Hang and unhang the node's work (see the top); each a no-op when it
  // changes nothing. hang() on a crashed node does nothing.
  void hang();
  void unhang();
  bool hung() const { return hung_; }
  // How many times the state or the hang changed (ZkEnsemble::state_stamp
  // sums its servers' nodes').
  uint64_t changes() const { return changes_.value(); }

  // Whether `from -> to` is one of the transitions listed at the top.
  static bool transition_allowed(State from, State to);

  // Set by whoever owns the node's software (a server, a client).
  std::function<void()> on_crash;
  std::function<void()> on_restart;

  // Messages held while paused, at most; beyond it new ones are dropped, as
  // a full socket buffer would.
  static constexpr size_t kQueuedMessagesMax = 100'000;

 private:
  // The one place the state changes: asserts the transition is allowed.
  void enter(State to);

  World& world_;
  std::string name_;
  LocalClock clock_;
  State state_ = State::kRunning;
  bool hung_ = false;
  // Each change of the state or the hang, counted in the World's
  // state_changes() (as the clock's set_drift and jump are).
  ChangeCount changes_;
  std::deque<Callback> queued_;
};

}  // namespace locksim::sim
