// The World's timer heap, ordered by (virtual time, sequence number).
//
// The sequence number breaks ties in insertion order, so two events at the
// same instant always run in the order they were scheduled: the heap never
// decides anything by itself that a seed did not.
//
// Invariant: events leave in non-decreasing (time, seq) order, and nothing is
// pushed earlier than the last event popped (that would be scheduling into
// the past). Both are asserted, in O(1), at push and at pop.
//
// Lanes: a timer of a fixed duration d (a client's timeout, a server's
// service time) is pushed at now + d, and now never goes back, so the
// timers of one duration arrive already in (time, seq) order. Each such
// duration gets a lane, a FIFO, instead of the heap; pop() takes the
// earliest of the heap's front and the lanes' fronts. The order events leave
// in is the same (time, seq) order as with the heap alone, but the heap stays
// small: a MySQL client's 60 s timeout, one per statement, kept ten thousand
// entries in it, and every pop sifted a far-future one down its whole depth.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
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
    const Entry entry = admit(at, std::move(action));
    heap_.emplace_back();  // a hole at the end, filled by sift_up
    sift_up(heap_.size() - 1, entry);
  }

  // As push(), for an event at `at` = now + `fixed`, where `fixed` is a
  // duration the caller uses again and again (a timeout): it goes to the
  // lane of that duration (made on first use; the heap once kLanes are
  // taken). Precondition (asserted): `at` is not before the last event
  // pushed to that lane, which holds for now + d with now never going back.
  void push_fixed(TimePoint at, Duration fixed, Action&& action) {
    Lane* lane = lane_for(fixed);
    if (lane == nullptr) return push(at, std::move(action));
    LOCKSIM_ASSERT_MSG(lane->count == 0 || !(at < lane->back().at), "a lane's times went back");
    lane->push_back(admit(at, std::move(action)));
    ++lane_entries_;
  }

  bool empty() const { return heap_.empty() && lane_entries_ == 0; }
  size_t size() const { return heap_.size() + lane_entries_; }
  TimePoint next_time() const {
    LOCKSIM_ASSERT(!empty());
    return earliest().entry.at;
  }
  // The time of the last event popped: the queue's notion of "now".
  TimePoint last_popped() const { return last_popped_; }

  // Removes and returns the earliest event (ties: the first pushed).
  Event pop() {
    LOCKSIM_ASSERT(!empty());
    return take(earliest());
  }

  // As pop(), if the earliest event is due by `end`; otherwise (or empty)
  // nothing, and the queue stays as it was. One search for the earliest
  // where next_time() then pop() make two (a World asks after every event).
  std::optional<Event> pop_due(TimePoint end) {
    if (empty()) return std::nullopt;
    const Earliest first = earliest();
    if (end < first.entry.at) return std::nullopt;
    return take(first);
  }

  // Drops every pending event. Time does not go back: last_popped() stays.
  void clear() {
    heap_.clear();
    for (size_t i = 0; i < lanes_used_; ++i) lanes_[i].clear();
    lane_entries_ = 0;
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

  // Both pushes' part: the checks, a slot for `action`, and the entry that
  // orders it (its sequence number above the slot).
  Entry admit(TimePoint at, Action&& action) {
    LOCKSIM_ASSERT_MSG(at >= last_popped_, "an event scheduled before the last one run");
    LOCKSIM_ASSERT_MSG(size() < kPendingMax, "too many pending events");
    LOCKSIM_ASSERT_MSG(next_seq_ < kSeqLimit, "event sequence numbers ran out");
    uint64_t slot = 0;
    if (free_.empty()) {
      slot = actions_.size();
      actions_.push_back(std::move(action));
    } else {
      slot = free_.back();
      free_.pop_back();
      actions_[slot] = std::move(action);
    }
    return Entry{at, next_seq_++ << kSlotBits | slot};
  }

  // A FIFO of entries in (time, seq) order, in a ring that doubles when
  // full (and so, in a steady state, never allocates).
  struct Lane {
    int64_t fixed_ns = 0;
    std::vector<Entry> ring;  // capacity a power of two, or empty
    size_t head = 0;
    size_t count = 0;
    const Entry& front() const { return ring[head]; }
    const Entry& back() const { return ring[(head + count - 1) & (ring.size() - 1)]; }
    void pop_front() {
      head = (head + 1) & (ring.size() - 1);
      --count;
    }
    void push_back(const Entry& e) {
      if (count == ring.size()) grow();
      ring[(head + count) & (ring.size() - 1)] = e;
      ++count;
    }
    void grow() {
      std::vector<Entry> bigger(ring.empty() ? 64 : 2 * ring.size());
      for (size_t i = 0; i < count; ++i) bigger[i] = ring[(head + i) & (ring.size() - 1)];
      ring = std::move(bigger);
      head = 0;
    }
    void clear() {
      head = 0;
      count = 0;
    }
  };
  // A run uses a handful of fixed durations (the clients' timeouts, a
  // server's service time); past these many, the others go to the heap.
  static constexpr size_t kLanes = 4;
  Lane* lane_for(Duration fixed) {
    for (size_t i = 0; i < lanes_used_; ++i) {
      if (lanes_[i].fixed_ns == fixed.ns) return &lanes_[i];
    }
    if (lanes_used_ == kLanes) return nullptr;
    Lane& lane = lanes_[lanes_used_++];
    lane.fixed_ns = fixed.ns;
    return &lane;
  }
  struct Earliest {
    Entry entry;
    size_t lane;  // kLanes: the heap's front
  };
  // Removes `first` (what earliest() found) and hands its event out.
  Event take(const Earliest& first) {
    const Entry top = first.entry;
    if (first.lane != kLanes) {
      lanes_[first.lane].pop_front();
      --lane_entries_;
    } else {
      const Entry last = heap_.back();
      heap_.pop_back();
      if (!heap_.empty()) {
        sift_down(last);
        // Heap order, spot-checked where it matters: the new front does not
        // come before the event just taken.
        LOCKSIM_ASSERT_MSG(!before(heap_.front(), top), "event heap out of order");
      }
    }
    LOCKSIM_ASSERT_MSG(top.at >= last_popped_, "event time went back");
    last_popped_ = top.at;
    // The slot is free for the next push: which slot an event sits in never
    // decides its order, (time, seq) alone does.
    const uint32_t slot = static_cast<uint32_t>(top.order & kSlotMask);
    free_.push_back(slot);
    return Event{top.at, top.order >> kSlotBits, std::move(actions_[slot])};
  }

  // The next event to leave: the earliest of the heap's front and the lanes'.
  // Precondition: not empty().
  Earliest earliest() const {
    Earliest e{heap_.empty() ? Entry{} : heap_.front(), kLanes};
    bool found = !heap_.empty();
    for (size_t i = 0; i < lanes_used_; ++i) {
      const Lane& lane = lanes_[i];
      if (lane.count == 0 || (found && !before(lane.front(), e.entry))) continue;
      e = Earliest{lane.front(), i};
      found = true;
    }
    LOCKSIM_ASSERT(found);
    return e;
  }

  std::vector<Entry> heap_;
  std::array<Lane, kLanes> lanes_;
  size_t lanes_used_ = 0;
  size_t lane_entries_ = 0;
  std::vector<Action> actions_;  // by slot; an empty one is free
  std::vector<uint32_t> free_;   // slots to reuse
  uint64_t next_seq_ = 0;
  TimePoint last_popped_{};
};

}  // namespace locksim::sim
