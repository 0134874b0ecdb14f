// Assertions that run in every build: Debug, RelWithDebInfo, Release and the
// benchmarks alike.
//
// Why not <cassert>: NDEBUG (which every optimised CMake build type defines)
// compiles it out, so an invariant that only holds in a test build is an
// invariant nobody checks where it matters — in the sweeps and demos that
// users run. Tiger Style: assertions are a force multiplier for finding bugs,
// so they stay on; their cost is measured in bench/ (docs/measurements.md).
//
// A failed assertion is a bug in locksim, never bad input (bad input is a
// ConfigError, exit 2). It prints, on stderr,
//   locksim: invariant broken: <condition> (<why>) at <file>:<line>
//   locksim: in run: <context set by the runner: seed and replay command>
// and exits with kExitInvariant at once (std::_Exit: no destructors run, since
// the state they would tear down is what just proved inconsistent; a fiber
// stack may be the current one).
//
// Write them in pairs (Tiger Style): where data is made and where it is used,
// so a broken invariant is caught on both sides of the seam that broke it.
//
// Build switch: configuring with -DLOCKSIM_ASSERTS=OFF defines
// LOCKSIM_ASSERTS_DISABLED, which turns every LOCKSIM_ASSERT into a no-op that
// still type-checks its condition. It exists only so the benchmarks can
// measure what the assertions cost; tests, CI and releases keep them on.
#pragma once

#include <string>

namespace locksim {

// The exit code of a broken invariant. 0-3 belong to verdicts and bad input
// (0 valid, 1 violation, 2 bad input, 3 internal error / checker disagreement);
// 70 is EX_SOFTWARE of sysexits.h: "an internal software error".
inline constexpr int kExitInvariant = 70;

// Prints the failure (and the current run's context, if any) and exits with
// kExitInvariant. `why` may be null. Cold: the hot paths it guards stay
// laid out for the case where the invariant holds.
[[noreturn]] [[gnu::cold]] void assertion_failed(const char* condition, const char* why,
                                                 const char* file, int line) noexcept;

// While alive, a failed assertion on this thread also prints `context` (e.g.
// "seed 42; replay: locksim run ..."). Scopes nest; the innermost wins. Each
// sweep worker thread has its own.
class AssertContext {
 public:
  explicit AssertContext(std::string context);
  ~AssertContext();
  AssertContext(const AssertContext&) = delete;
  AssertContext& operator=(const AssertContext&) = delete;

 private:
  std::string context_;
  const AssertContext* outer_;
  friend const std::string* current_assert_context();
};

// The innermost context on this thread, or nullptr.
const std::string* current_assert_context();

}  // namespace locksim

#if defined(LOCKSIM_ASSERTS_DISABLED)
#define LOCKSIM_ASSERT(condition) ((void)sizeof(static_cast<bool>(condition)))
#define LOCKSIM_ASSERT_MSG(condition, why) ((void)sizeof(static_cast<bool>(condition)), (void)(why))
#else
// LOCKSIM_ASSERT(x): x must hold, in every build.
#define LOCKSIM_ASSERT(condition) \
  (static_cast<bool>(condition)   \
       ? static_cast<void>(0)     \
       : ::locksim::assertion_failed(#condition, nullptr, __FILE__, __LINE__))
// LOCKSIM_ASSERT_MSG(x, "why it must"): the same, with the reason printed.
#define LOCKSIM_ASSERT_MSG(condition, why) \
  (static_cast<bool>(condition)            \
       ? static_cast<void>(0)              \
       : ::locksim::assertion_failed(#condition, (why), __FILE__, __LINE__))
#endif
