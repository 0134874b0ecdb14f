// The World's timer heap, ordered by (virtual time, sequence number).
//
// The sequence number breaks ties in insertion order, so two events at the
// same instant always run in the order they were scheduled: the heap never
// decides anything by itself that a seed did not.
//
// Invariant: events leave in non-decreasing (time, seq) order, and nothing is
// pushed earlier than the last event popped (that would be scheduling into
// the past). Both are asserted, in O(1), at push and at pop.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "env/assert.h"
#include "env/time.h"

namespace locksim::sim {

class EventQueue {
 public:
  using Action = std::function<void()>;

  struct Event {
    TimePoint at;
    uint64_t seq;
    Action action;
  };

  // Precondition: `at` is not before the last popped event's time.
  void push(TimePoint at, Action action) {
    LOCKSIM_ASSERT_MSG(at >= last_popped_, "an event scheduled before the last one run");
    heap_.push_back(Event{at, next_seq_++, std::move(action)});
    sift_up(heap_.size() - 1);
  }

  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  TimePoint next_time() const {
    LOCKSIM_ASSERT(!heap_.empty());
    return heap_.front().at;
  }
  // The time of the last event popped: the queue's notion of "now".
  TimePoint last_popped() const { return last_popped_; }

  // Removes and returns the earliest event (ties: the first pushed).
  Event pop() {
    LOCKSIM_ASSERT(!heap_.empty());
    Event top = std::move(heap_.front());
    if (heap_.size() > 1) {
      heap_.front() = std::move(heap_.back());
      heap_.pop_back();
      sift_down(0);
      // Heap order, spot-checked where it matters: the new front does not
      // come before the event just taken.
      LOCKSIM_ASSERT_MSG(!before(heap_.front(), top), "event heap out of order");
    } else {
      heap_.pop_back();
    }
    LOCKSIM_ASSERT_MSG(top.at >= last_popped_, "event time went back");
    last_popped_ = top.at;
    return top;
  }

  // Drops every pending event. Time does not go back: last_popped() stays.
  void clear() { heap_.clear(); }

 private:
  static bool before(const Event& a, const Event& b) {
    return a.at < b.at || (a.at == b.at && a.seq < b.seq);
  }
  void sift_up(size_t i) {
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (!before(heap_[i], heap_[parent])) break;
      std::swap(heap_[i], heap_[parent]);
      i = parent;
    }
  }
  void sift_down(size_t i) {
    const size_t n = heap_.size();
    for (;;) {
      const size_t l = 2 * i + 1;
      const size_t r = l + 1;
      size_t m = i;
      if (l < n && before(heap_[l], heap_[m])) m = l;
      if (r < n && before(heap_[r], heap_[m])) m = r;
      if (m == i) return;
      std::swap(heap_[i], heap_[m]);
      i = m;
    }
  }

  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
  TimePoint last_popped_{};
};

}  // namespace locksim::sim
