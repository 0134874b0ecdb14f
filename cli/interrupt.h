// Ctrl-C for the commands that keep what they have (sweep, shrink): the
// first SIGINT only sets a flag that the work polls between runs, so a run in
// flight finishes, the command writes what is done and exits 130
// (cli/exit_codes.h). A second SIGINT, once the default action is back,
// kills as usual.
#pragma once

#include <atomic>

namespace locksim::cli {

// While one is alive, SIGINT sets stop_flag() instead of killing the
// process; its destructor restores the default action. One at a time, on the
// main thread (the flag is process-wide, as the signal is).
class StopOnInterrupt {
 public:
  StopOnInterrupt();
  ~StopOnInterrupt();
  StopOnInterrupt(const StopOnInterrupt&) = delete;
  StopOnInterrupt& operator=(const StopOnInterrupt&) = delete;
};

// Set by SIGINT under a StopOnInterrupt; never cleared (one command per process).
const std::atomic<bool>& stop_flag();

}  // namespace locksim::cli
