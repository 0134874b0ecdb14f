#include "cli/progress_line.h"

#include <unistd.h>

#include <iostream>

namespace locksim::cli {

bool stderr_is_terminal() {
  return isatty(STDERR_FILENO) != 0;
}

bool progress_due(int64_t now_ns, int64_t last_ns, bool tty) {
  return last_ns == 0 || now_ns - last_ns >= (tty ? kProgressTerminalEveryNs : kProgressLogEveryNs);
}

void print_progress_line(const std::string& line, bool tty, bool final) {
  if (tty) {
    std::cerr << "\r" << line << "\x1b[K" << (final ? "\n" : "") << std::flush;
  } else {
    std::cerr << line << "\n" << std::flush;
  }
}

}  // namespace locksim::cli
