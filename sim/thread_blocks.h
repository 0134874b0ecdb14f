// Per-thread free lists of same-sized memory blocks, and a standard allocator
// over them: the memory of state a World makes and frees once per request
// (an RPC's shared state, a MySQL statement) waits in its thread's list for
// the next one instead of going back to the heap.
//
// Why per thread: a World and everything it schedules stay on one thread
// (a sweep's workers each own theirs), so a list needs no lock. A block given
// back on another thread than took it joins that thread's list: blocks are
// plain operator new memory, and only the lists are per thread.
//
// Why it cannot reach behaviour: nothing orders, hashes or prints a block by
// its address, so which block a request gets decides nothing (the
// determinism rules in docs/architecture.md).
#pragma once

#include <cstddef>
#include <new>
#include <utility>

namespace locksim::sim {

// Blocks of kBytes (default-aligned). At most kFreeMax free ones are kept per
// thread and size; the rest go back to the heap. A World keeps about as many
// alive as it has requests whose last event is still queued (an RPC's
// timeout: a few hundred in a run of many clients).
template <size_t kBytes>
class ThreadBlocks {
 public:
  static constexpr size_t kFreeMax = 1024;

  static void* take() {
    List& list = this_threads_list();
    return list.count == 0 ? ::operator new(kBytes) : list.free[--list.count];
  }
  static void give_back(void* block) noexcept {
    List& list = this_threads_list();
    if (list.count < kFreeMax) {
      list.free[list.count++] = block;
    } else {
      ::operator delete(block);
    }
  }

 private:
  struct List {
    void* free[kFreeMax];
    size_t count = 0;
    ~List() {
      while (count > 0) ::operator delete(free[--count]);
    }
  };
  static List& this_threads_list() {
    thread_local List list;
    return list;
  }
};

// A `T` made in a block of its size from this thread's list (a constructor
// that throws gives the block back), and its end: the pair every pooled
// single object uses (sim/local_shared.h's box, sim/callback.h's boxed
// callable).
template <class T, class... Args>
T* new_in_block(Args&&... args) {
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "an over-aligned pooled object");
  void* block = ThreadBlocks<sizeof(T)>::take();
  try {
    return ::new (block) T(std::forward<Args>(args)...);
  } catch (...) {
    ThreadBlocks<sizeof(T)>::give_back(block);
    throw;
  }
}
template <class T>
void delete_in_block(T* object) noexcept {
  object->~T();
  ThreadBlocks<sizeof(T)>::give_back(object);
}

// A standard allocator whose single objects come from ThreadBlocks (arrays
// from the heap), for std::allocate_shared: the object and its control block
// are then one block, reused.
template <class T>
class ThreadBlockAllocator {
 public:
  using value_type = T;
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "an over-aligned pooled object");

  ThreadBlockAllocator() noexcept = default;
  template <class U>
  ThreadBlockAllocator(const ThreadBlockAllocator<U>&) noexcept {}  // NOLINT: rebinding

  T* allocate(size_t n) {
    if (n != 1) return static_cast<T*>(::operator new(n * sizeof(T)));
    return static_cast<T*>(ThreadBlocks<sizeof(T)>::take());
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n != 1) {
      ::operator delete(p);
      return;
    }
    ThreadBlocks<sizeof(T)>::give_back(p);
  }

  template <class U>
  bool operator==(const ThreadBlockAllocator<U>&) const noexcept {
    return true;  // any one frees what another took (on the same thread)
  }
};

}  // namespace locksim::sim
