// A shared pointer for state that one thread's World shares between the
// events of one exchange (an RPC's handler, reply and timeout).
//
// Why not std::shared_ptr: in a program that starts threads (a sweep's
// workers), libstdc++ counts references with locked instructions, six per
// RPC, though a World and everything it schedules stay on one thread. This
// counts with plain integers: a copy must never cross to another thread
// (nothing in a World does; sweep workers each own theirs).
//
// Why a pool: an RPC makes one box per call, so a run would allocate and free
// one per request. A freed box's memory waits in its thread's free list
// (sim/thread_blocks.h) for the next make(). No behaviour can depend on which
// memory a box gets: nothing orders, hashes or prints a box by its address.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

#include "env/assert.h"
#include "sim/thread_blocks.h"

namespace locksim::sim {

template <class T>
class LocalShared {
 public:
  template <class... Args>
  static LocalShared make(Args&&... args) {
    LocalShared p;
    p.box_ = new_in_block<Box>(std::forward<Args>(args)...);
    return p;
  }

  LocalShared() noexcept = default;
  LocalShared(const LocalShared& o) noexcept : box_(o.box_) {
    if (box_ != nullptr) ++box_->refs;
  }
  LocalShared(LocalShared&& o) noexcept : box_(std::exchange(o.box_, nullptr)) {}
  LocalShared& operator=(LocalShared o) noexcept {
    std::swap(box_, o.box_);
    return *this;
  }
  ~LocalShared() { release(); }

  T* get() const noexcept { return box_ == nullptr ? nullptr : &box_->value; }
  T* operator->() const noexcept {
    LOCKSIM_ASSERT_MSG(box_ != nullptr, "an empty LocalShared used");
    return &box_->value;
  }
  T& operator*() const noexcept { return *operator->(); }

 private:
  // A box lives until the last event holding it has run, and an RPC's
  // timeout event stays in the queue after the reply came: a client keeps
  // about (timeout ÷ time per call) boxes alive, a few hundred at most in a
  // run of many clients. Its block comes from sim/thread_blocks.h.
  struct Box {
    template <class... Args>
    explicit Box(Args&&... args) : value(std::forward<Args>(args)...) {}
    T value;
    uint64_t refs = 1;
  };
  void release() noexcept {
    if (box_ == nullptr) return;
    // Pair of make() and the copy: a live box has at least this reference.
    LOCKSIM_ASSERT(box_->refs >= 1);
    if (--box_->refs == 0) delete_in_block(box_);
    box_ = nullptr;
  }

  Box* box_ = nullptr;
};

}  // namespace locksim::sim
