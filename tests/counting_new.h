// A global operator new that counts, per thread, and forwards to malloc: what
// the allocation tests read (steady_state_alloc_test.cpp, run_alloc_test.cpp).
// A World and all its fibers run on one thread, so the count is the run's.
//
// Include it from exactly one file of a test binary (each *_test.cpp is a
// binary of its own): the replacement operators are definitions, which the
// language forbids to declare inline, so two files including it would
// define them twice.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <new>

namespace locksim::test_alloc {
inline thread_local uint64_t t_allocations = 0;

// Whether the operator new below is the one in use: the pair of every count
// a test asserts (a low count must mean little was allocated, not that the
// allocations went past the counter).
inline bool counter_sees_an_allocation() {
  const uint64_t before = t_allocations;
  // A call, not a new-expression: the compiler may drop a new-expression
  // whose result is only deleted, never a call of operator new.
  void* p = ::operator new(sizeof(int));
  const bool seen = t_allocations == before + 1;
  ::operator delete(p);
  return seen;
}
}  // namespace locksim::test_alloc

void* operator new(std::size_t size) {
  ++locksim::test_alloc::t_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t /*size*/) noexcept {
  std::free(p);
}
