// Handles to a Waiter that may be gone by the time they are used: a timer
// that outlives what it watches (a MySQL statement's client timeout, armed
// for 60 s and nearly always answered within milliseconds) holds a handle,
// not the waiter, and finds nothing once the waiter has closed its slot.
//
// Why not a shared box per waiter (sim/local_shared.h): a box lives until
// its timer has run, so a client timeout of 60 s keeps a minute of
// statements' boxes alive, thousands, past what a thread's free list keeps
// (sim/thread_blocks.h), and nearly every statement paid a heap allocation.
// A slot is freed when its waiter goes, so the table holds only the waiters
// alive at once (one per client in a statement) and never allocates again
// once it has grown to that.
//
// Per thread, as ThreadBlocks: a World and its timers stay on one. A slot's
// generation grows on every close, so a handle to an earlier waiter of the
// slot finds nothing. Nothing can depend on which slot a waiter gets: a
// handle is only compared with its own slot, never ordered or printed.
#pragma once

#include <cstdint>
#include <vector>

#include "env/assert.h"
#include "sim/world.h"

namespace locksim::sim {

class WaiterSlots {
 public:
  struct Handle {
    uint32_t slot = 0;
    uint64_t generation = 0;
  };

  // A handle to `waiter`, which stays valid until close().
  static Handle open(Waiter* waiter) {
    LOCKSIM_ASSERT(waiter != nullptr);
    Table& t = table();
    if (t.free.empty()) {
      LOCKSIM_ASSERT_MSG(t.slots.size() < kSlotsMax,
                         "more waiters alive at once than a thread keeps");
      t.slots.push_back(Slot{});
      t.free.push_back(static_cast<uint32_t>(t.slots.size() - 1));
    }
    const uint32_t slot = t.free.back();
    t.free.pop_back();
    Slot& s = t.slots[slot];
    LOCKSIM_ASSERT(s.waiter == nullptr);
    s.waiter = waiter;
    return Handle{slot, s.generation};
  }

  // The waiter is going: handles to it find nothing from now on.
  static void close(Handle h) {
    Table& t = table();
    LOCKSIM_ASSERT(h.slot < t.slots.size());
    Slot& s = t.slots[h.slot];
    // Pair of open(): a handle is closed once, by its owner.
    LOCKSIM_ASSERT(s.waiter != nullptr && s.generation == h.generation);
    s.waiter = nullptr;
    ++s.generation;
    t.free.push_back(h.slot);
  }

  // The waiter `h` was opened for, or nullptr when it has closed.
  static Waiter* find(Handle h) {
    Table& t = table();
    LOCKSIM_ASSERT(h.slot < t.slots.size());
    const Slot& s = t.slots[h.slot];
    return s.generation == h.generation ? s.waiter : nullptr;
  }

 private:
  // A limit on everything: a run of many clients has a few hundred waiters
  // with a timer each at once; this many means a leak (a waiter never closed).
  static constexpr size_t kSlotsMax = 1 << 20;

  struct Slot {
    Waiter* waiter = nullptr;
    uint64_t generation = 0;
  };
  struct Table {
    std::vector<Slot> slots;
    std::vector<uint32_t> free;
  };
  static Table& table() {
    thread_local Table t;
    return t;
  }
};

}  // namespace locksim::sim
