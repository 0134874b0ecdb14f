#include "env/assert.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace locksim {

namespace {
thread_local const AssertContext* innermost = nullptr;
}  // namespace

AssertContext::AssertContext(std::string context)
    : context_(std::move(context)), outer_(innermost) {
  innermost = this;
}

AssertContext::~AssertContext() {
  innermost = outer_;
}

const std::string* current_assert_context() {
  return innermost == nullptr ? nullptr : &innermost->context_;
}

void assertion_failed(const char* condition, const char* why, const char* file, int line) noexcept {
  // stdio only: no allocation, no exceptions, nothing that could itself fail
  // on a heap the broken invariant may have corrupted.
  if (why != nullptr) {
    std::fprintf(stderr, "locksim: invariant broken: %s (%s) at %s:%d\n", condition, why, file,
                 line);
  } else {
    std::fprintf(stderr, "locksim: invariant broken: %s at %s:%d\n", condition, file, line);
  }
  if (const std::string* context = current_assert_context()) {
    std::fprintf(stderr, "locksim: in run: %s\n", context->c_str());
  }
  std::fflush(stderr);
  std::_Exit(kExitInvariant);
}

}  // namespace locksim
