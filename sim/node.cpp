#include "sim/node.h"

#include "env/assert.h"
#include "sim/world.h"

namespace locksim::sim {

bool Node::transition_allowed(State from, State to) {
  switch (from) {
    case State::kRunning:
      return to == State::kPaused || to == State::kCrashed;
    case State::kPaused:
      return to == State::kRunning || to == State::kCrashed;
    case State::kCrashed:
      return to == State::kRunning;
  }
  return false;
}

Node::Node(World& world, std::string name, Duration clock_offset)
    : world_(world), name_(std::move(name)), clock_(clock_offset) {
  LOCKSIM_ASSERT_MSG(!name_.empty(), "a node needs a name (faults and reports use it)");
  world_.count_changes_of(changes_);
  world_.count_changes_of(clock_.change_count());
}

TimePoint Node::local_now() const {
  return clock_.local(world_.now());
}

void Node::deliver(Callback&& message) {
  LOCKSIM_ASSERT(message != nullptr);
  switch (state_) {
    case State::kRunning:
      message();
      return;
    case State::kPaused:
      if (queued_.size() < kQueuedMessagesMax) queued_.push_back(std::move(message));
      return;
    case State::kCrashed:
      LOCKSIM_ASSERT_MSG(queued_.empty(), "a crashed node holds messages");
      return;
  }
}

void Node::enter(State to) {
  LOCKSIM_ASSERT_MSG(transition_allowed(state_, to), "node state transition not allowed");
  // A crashed node keeps nothing: its queue died with it (pair: deliver()).
  LOCKSIM_ASSERT_MSG(to != State::kCrashed || queued_.empty(), "a crashing node keeps messages");
  state_ = to;
  changes_.bump();
}

void Node::pause() {
  if (state_ != State::kRunning) return;  // see the header: a request that means nothing
  enter(State::kPaused);
}

void Node::resume() {
  if (state_ != State::kPaused) return;
  enter(State::kRunning);
  world_.release_held_wakes(*this);
  // Bounded by kQueuedMessagesMax; a handler that pauses the node again
  // leaves the rest queued, in order.
  while (!queued_.empty() && state_ == State::kRunning) {
    auto message = std::move(queued_.front());
    queued_.pop_front();
    message();
  }
}

void Node::hang() {
  if (state_ == State::kCrashed) return;
  hung_ = true;
  changes_.bump();
}

void Node::unhang() {
  if (!hung_) return;
  hung_ = false;
  changes_.bump();
  if (state_ == State::kRunning) world_.release_held_wakes(*this);
}

void Node::crash() {
  if (state_ == State::kCrashed) return;
  hung_ = false;    // the process that hung is gone
  queued_.clear();  // a paused node's queue dies with it
  enter(State::kCrashed);
  world_.cancel_fibers_of(*this);
  // Its connections are reset (peers hear at once); a pause or a partition
  // never calls this: they are silent.
  world_.node_crashed(*this);
  if (on_crash) on_crash();
}

void Node::restart() {
  if (state_ != State::kCrashed) return;
  LOCKSIM_ASSERT(queued_.empty());  // a restarted node starts with no backlog
  enter(State::kRunning);
  if (on_restart) on_restart();
}

}  // namespace locksim::sim
