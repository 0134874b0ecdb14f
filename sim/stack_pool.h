// Fiber stacks kept for the next run of the same thread (a sweep worker's
// next seed) instead of freed and allocated again: a run makes a handful of
// fibers, a sweep worker thousands of runs.
//
// A Boost.Context StackAllocator (allocate/deallocate, as fixedsize_stack).
// Which stack a fiber gets never reaches behaviour: nothing in a run reads a
// stack's address (World's fiber lookup is by context and never iterated).
#pragma once

#include <boost/context/stack_context.hpp>

#include <cstddef>

namespace locksim::sim {

class PooledStack {
 public:
  // Stacks kept per thread, at most: more are freed (a run needs a few).
  static constexpr size_t kKeptMax = 32;

  explicit PooledStack(size_t size_bytes) : size_bytes_(size_bytes) {}

  boost::context::stack_context allocate();
  void deallocate(boost::context::stack_context& sctx) noexcept;

 private:
  size_t size_bytes_;
};

}  // namespace locksim::sim
