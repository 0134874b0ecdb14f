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
// one per request. A freed box's memory waits in its thread's pool for the
// next make() (at most kPoolMax of them; the rest go back to the heap). No
// behaviour can depend on which memory a box gets: nothing orders, hashes or
// prints a box by its address.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

#include "env/assert.h"

namespace locksim::sim {

template <class T>
class LocalShared {
 public:
  template <class... Args>
  static LocalShared make(Args&&... args) {
    Pool& pool = this_threads_pool();
    void* memory = pool.count == 0 ? ::operator new(sizeof(Box)) : pool.free[--pool.count];
    LocalShared p;
    try {
      p.box_ = ::new (memory) Box{T(std::forward<Args>(args)...), 1};
    } catch (...) {
      give_back(memory);
      throw;
    }
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
  struct Box {
    T value;
    uint64_t refs;
  };
  // The pool's memory comes from plain operator new.
  static_assert(alignof(Box) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "an over-aligned shared state");
  void release() noexcept {
    if (box_ == nullptr) return;
    // Pair of make() and the copy: a live box has at least this reference.
    LOCKSIM_ASSERT(box_->refs >= 1);
    if (--box_->refs == 0) {
      box_->~Box();
      give_back(box_);
    }
    box_ = nullptr;
  }

  // A box lives until the last event holding it has run, and an RPC's
  // timeout event stays in the queue after the reply came: a client keeps
  // about (timeout ÷ time per call) boxes alive, a few hundred at most in a
  // run of many clients. Beyond this many free ones, memory goes back to
  // the heap.
  static constexpr size_t kPoolMax = 1024;
  struct Pool {
    void* free[kPoolMax];
    size_t count = 0;
    ~Pool() {
      while (count > 0) ::operator delete(free[--count]);
    }
  };
  static Pool& this_threads_pool() {
    thread_local Pool pool;
    return pool;
  }
  // Only after a make() on this thread, which made its pool.
  static void give_back(void* memory) noexcept {
    Pool& pool = this_threads_pool();
    if (pool.count < kPoolMax) {
      pool.free[pool.count++] = memory;
    } else {
      ::operator delete(memory);
    }
  }

  Box* box_ = nullptr;
};

}  // namespace locksim::sim
