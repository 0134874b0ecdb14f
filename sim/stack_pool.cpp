#include "sim/stack_pool.h"

#include <cstdlib>
#include <new>

#include "env/assert.h"

namespace locksim::sim {

namespace {

struct Kept {
  void* base;
  size_t size_bytes;
};

struct Pool {
  Kept stacks[PooledStack::kKeptMax];
  size_t count = 0;
};

// A plain pointer, so it stays readable while the thread's other
// thread-locals are destroyed (Boost's scheduler frees the last fibers'
// stacks then): once the pool is gone, stacks are simply freed.
thread_local Pool* g_pool = nullptr;

struct PoolOwner {
  Pool pool;
  PoolOwner() { g_pool = &pool; }
  ~PoolOwner() {
    g_pool = nullptr;
    for (size_t i = 0; i < pool.count; ++i) std::free(pool.stacks[i].base);
  }
};

Pool* pool() {
  thread_local PoolOwner owner;
  return g_pool;
}

}  // namespace

boost::context::stack_context PooledStack::allocate() {
  void* base = nullptr;
  if (Pool* p = pool()) {
    for (size_t i = p->count; i > 0; --i) {
      if (p->stacks[i - 1].size_bytes != size_bytes_) continue;
      base = p->stacks[i - 1].base;
      p->stacks[i - 1] = p->stacks[--p->count];
      break;
    }
  }
  if (base == nullptr) base = std::malloc(size_bytes_);
  if (base == nullptr) throw std::bad_alloc();
  boost::context::stack_context sctx;
  sctx.size = size_bytes_;
  sctx.sp = static_cast<char*>(base) + size_bytes_;  // stacks grow down
  return sctx;
}

void PooledStack::deallocate(boost::context::stack_context& sctx) noexcept {
  LOCKSIM_ASSERT(sctx.sp != nullptr && sctx.size == size_bytes_);
  void* base = static_cast<char*>(sctx.sp) - sctx.size;
  Pool* p = g_pool;  // not pool(): never make the pool while a thread ends
  if (p == nullptr || p->count == kKeptMax) {
    std::free(base);
    return;
  }
  p->stacks[p->count++] = Kept{base, size_bytes_};
}

}  // namespace locksim::sim
