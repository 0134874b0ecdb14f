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
#include <utility>
#include <vector>

#include "env/assert.h"
#include "env/time.h"
#include "sim/callback.h"

namespace locksim::sim {

class EventQueue {
 public:
  using Action = Callback;

  struct Event {
    TimePoint at;
    uint64_t seq;
    Action action;
  };

  // Precondition: `at` is not before the last popped event's time.
  // By rvalue: a Callback's move is an indirect call and a 64-byte copy, and
  // every event passes through here.
  void push(TimePoint at, Action&& action) {
    LOCKSIM_ASSERT_MSG(at >= last_popped_, "an event scheduled before the last one run");
    LOCKSIM_ASSERT_MSG(heap_.size() < kPendingMax, "too many pending events");
    LOCKSIM_ASSERT_MSG(next_seq_ < kSeqLimit, "event sequence numbers ran out");
    uint64_t slot;
    if (free_.empty()) {
      slot = actions_.size();
      actions_.push_back(std::move(action));
    } else {
      slot = free_.back();
      free_.pop_back();
      actions_[slot] = std::move(action);
    }
    const Entry entry{at, next_seq_++ << kSlotBits | slot};
    heap_.emplace_back();  // a hole at the end, filled by sift_up
    sift_up(heap_.size() - 1, entry);
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
    const Entry top = heap_.front();
    const Entry last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) {
      sift_down(last);
      // Heap order, spot-checked where it matters: the new front does not
      // come before the event just taken.
      LOCKSIM_ASSERT_MSG(!before(heap_.front(), top), "event heap out of order");
    }
    LOCKSIM_ASSERT_MSG(top.at >= last_popped_, "event time went back");
    last_popped_ = top.at;
    // The slot is free for the next push: which slot an event sits in never
    // decides its order, (time, seq) alone does.
    const uint32_t slot = static_cast<uint32_t>(top.order & kSlotMask);
    free_.push_back(slot);
    return Event{top.at, top.order >> kSlotBits, std::move(actions_[slot])};
  }

  // Drops every pending event. Time does not go back: last_popped() stays.
  void clear() {
    heap_.clear();
    actions_.clear();
    free_.clear();
  }

 private:
  // An entry's order word is its sequence number above its action's slot:
  // comparing the words compares the sequence numbers (each is unique), and
  // the entry stays 16 bytes, four to a cache line.
  static constexpr int kSlotBits = 26;
  static constexpr uint64_t kSlotMask = (uint64_t{1} << kSlotBits) - 1;
  // Far above any run's need (a run keeps a few thousand); a runaway that
  // schedules without bound stops here rather than exhausting memory.
  static constexpr size_t kPendingMax = size_t{1} << kSlotBits;
  // 2^38 pushes: hundreds of times WorldOptions::max_events.
  static constexpr uint64_t kSeqLimit = uint64_t{1} << (64 - kSlotBits);

  // The heap moves these 16-byte entries; the actions stay where they are.
  struct Entry {
    TimePoint at;
    uint64_t order;  // seq << kSlotBits | slot
  };
  static bool before(const Entry& a, const Entry& b) {
    return a.at < b.at || (a.at == b.at && a.order < b.order);
  }
  // Both sifts carry the moving entry in registers and write it once, into
  // the hole where it belongs: writing it first and reading it back costs a
  // store-forwarding stall on every event.
  void sift_up(size_t i, const Entry& moving) {
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (!before(moving, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = moving;
  }
  // Fills the hole at the root with `moving` or a descendant.
  void sift_down(const Entry& moving) {
    const size_t n = heap_.size();
    size_t i = 0;
    for (;;) {
      const size_t left = 2 * i + 1;
      if (left >= n) break;
      const size_t right = left + 1;
      const size_t m = right < n && before(heap_[right], heap_[left]) ? right : left;
      if (!before(heap_[m], moving)) break;
      heap_[i] = heap_[m];
      i = m;
    }
    heap_[i] = moving;
  }

  std::vector<Entry> heap_;
  std::vector<Action> actions_;  // by slot; an empty one is free
  std::vector<uint32_t> free_;   // slots to reuse
  uint64_t next_seq_ = 0;
  TimePoint last_popped_{};
};

}  // namespace locksim::sim
