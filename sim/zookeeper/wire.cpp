#include "sim/zookeeper/wire.h"

#include <utility>

namespace locksim::sim::zookeeper {

void OrderedPipe::send(Network& net, const Node& from, Node& to, Callback message,
                       std::shared_ptr<void> keep) {
  const uint64_t seq = next_send_++;
  // A Callback inside a Callback does not fit inline: the wrapper is boxed
  // in a block from the thread's free lists (sim/callback.h).
  net.send(from, to, [this, seq, keep = std::move(keep), message = std::move(message)]() mutable {
    arrive(seq, std::move(message));
  });
}

void OrderedPipe::arrive(uint64_t seq, Callback message) {
  if (seq < next_run_) return;           // cannot happen on one pipe; harmless if it did
  if (held_.size() >= kHeldMax) return;  // a dead pipe takes nothing, in line or not
  if (seq == next_run_) {
    // In line, as nearly every message is: run it without a trip through the
    // map (a node allocated and freed per message), then any it unblocked.
    // The same order as the loop below would take.
    ++next_run_;
    message();
  } else {
    held_.emplace(seq, std::move(message));
  }
  // Runs every message that is now next in line. A message may send on this
  // pipe again (a reply to a reply), which only appends: iteration is safe.
  for (auto it = held_.find(next_run_); it != held_.end(); it = held_.find(next_run_)) {
    Callback run = std::move(it->second);
    held_.erase(it);
    ++next_run_;
    run();
  }
}

}  // namespace locksim::sim::zookeeper
