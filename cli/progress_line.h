// The one way a command shows its progress on stderr (run, sweep, shrink,
// margin, margins): on a terminal one line redrawn in place, at most 5
// times a second; in a log (not a terminal) a line of its own, at most once
// every 5 s. Reads the wall clock only through its caller (wall_ns).
#pragma once

#include <cstdint>
#include <string>

namespace locksim::cli {

// How often a progress line may be printed again.
constexpr int64_t kProgressTerminalEveryNs = 200'000'000;
constexpr int64_t kProgressLogEveryNs = 5'000'000'000;

// Whether stderr is a terminal.
bool stderr_is_terminal();

// Whether a line printed at `last_ns` (0: never) may be printed again at `now_ns`.
bool progress_due(int64_t now_ns, int64_t last_ns, bool tty);

// Prints `line`: on a terminal over the one before ("\r", then "\x1b[K"
// erases what a longer earlier line left), ending it with a newline when
// `final`; in a log on a line of its own.
void print_progress_line(const std::string& line, bool tty, bool final);

}  // namespace locksim::cli
