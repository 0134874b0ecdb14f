#include "sim/node.h"

#include <cassert>

#include "sim/world.h"

namespace locksim::sim {

Node::Node(World& world, std::string name, Duration clock_offset)
    : world_(world), name_(std::move(name)), clock_(clock_offset) {}

TimePoint Node::local_now() const {
  return clock_.local(world_.now());
}

void Node::deliver(std::function<void()> message) {
  switch (state_) {
    case State::kRunning:
      message();
      return;
    case State::kPaused:
      if (queued_.size() < kMaxQueuedMessages) queued_.push_back(std::move(message));
      return;
    case State::kCrashed:
      return;
  }
}

void Node::pause() {
  if (state_ != State::kRunning) return;  // pausing a crashed node means nothing
  state_ = State::kPaused;
}

void Node::resume() {
  if (state_ != State::kPaused) return;
  state_ = State::kRunning;
  world_.release_held_wakes(*this);
  // Bounded by kMaxQueuedMessages; a handler that pauses the node again
  // leaves the rest queued, in order.
  while (!queued_.empty() && state_ == State::kRunning) {
    auto message = std::move(queued_.front());
    queued_.pop_front();
    message();
  }
}

void Node::crash() {
  if (state_ == State::kCrashed) return;
  state_ = State::kCrashed;
  queued_.clear();
  world_.cancel_fibers_of(*this);
  if (on_crash) on_crash();
}

void Node::restart() {
  if (state_ != State::kCrashed) return;
  state_ = State::kRunning;
  if (on_restart) on_restart();
}

}  // namespace locksim::sim
