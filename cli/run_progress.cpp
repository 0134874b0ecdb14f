#include "cli/run_progress.h"

#include <cstdio>
#include <iostream>

#include "cli/interrupt.h"
#include "cli/output_paths.h"
#include "cli/progress_line.h"
#include "env/assert.h"
#include "env/parse.h"

namespace locksim::cli {

namespace {

// Before this much wall time, no line: a run that ends sooner needs none.
constexpr int64_t kFirstLineAfterNs = 2'000'000'000;

// Whole seconds as "41s", "3m 10s", "2h 05m": what a person reads at a glance.
std::string clock_text(int64_t seconds) {
  char text[48];
  if (seconds < 60) {
    std::snprintf(text, sizeof text, "%llds", static_cast<long long>(seconds));
  } else if (seconds < 3600) {
    std::snprintf(text, sizeof text, "%lldm %02llds", static_cast<long long>(seconds / 60),
                  static_cast<long long>(seconds % 60));
  } else {
    std::snprintf(text, sizeof text, "%lldh %02lldm", static_cast<long long>(seconds / 3600),
                  static_cast<long long>(seconds / 60 % 60));
  }
  return text;
}

}  // namespace

RunProgress::RunProgress(Duration duration, bool quiet)
    : duration_(duration), quiet_(quiet), tty_(stderr_is_terminal()), start_ns_(wall_ns()) {
  LOCKSIM_ASSERT_MSG(duration > Duration::zero(), "a run lasts some time");
}

bool RunProgress::poll(TimePoint now, uint64_t events) {
  if (stop_flag().load()) return false;
  if (quiet_) return true;
  const int64_t wall = wall_ns();
  if (wall - start_ns_ < kFirstLineAfterNs) return true;
  if (!progress_due(wall, last_ns_, tty_)) return true;
  last_ns_ = wall;
  print_progress_line(line(now - TimePoint{}, duration_, events, wall - start_ns_), tty_, false);
  return true;
}

void RunProgress::finish() {
  if (tty_ && last_ns_ != 0) std::cerr << "\n" << std::flush;
}

std::string RunProgress::line(Duration done, Duration duration, uint64_t events, int64_t wall_ns) {
  LOCKSIM_ASSERT(done >= Duration::zero() && done <= duration);
  LOCKSIM_ASSERT(wall_ns >= 0);
  const double share = static_cast<double>(done.ns) / static_cast<double>(duration.ns);
  // The time left at the pace so far; none until some virtual time passed.
  const std::string left = share > 0
                               ? "; about " +
                                     clock_text(static_cast<int64_t>(static_cast<double>(wall_ns) /
                                                                     1e9 * (1 - share) / share)) +
                                     " left"
                               : "";
  char text[200];
  std::snprintf(text, sizeof text, "run: %s of %s simulated (%.1f %%), %.1f M events in %s%s",
                clock_text(done.ns / 1'000'000'000).c_str(), format_duration(duration).c_str(),
                share * 100, static_cast<double>(events) / 1e6,
                clock_text(wall_ns / 1'000'000'000).c_str(), left.c_str());
  return text;
}

}  // namespace locksim::cli
