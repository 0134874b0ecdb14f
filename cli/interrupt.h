// Ctrl-C and SIGTERM for the commands that keep what they have (sweep,
// shrink, margins): the first SIGINT or SIGTERM only sets a flag that the
// work polls between runs, so a run in flight finishes, the command writes
// what is done and exits 130 (SIGINT) or 143 (SIGTERM: what a CI job's
// timeout sends; cli/exit_codes.h). A second signal, once the default action
// is back, kills as usual.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace locksim::cli {

// While one is alive, SIGINT and SIGTERM set stop_flag() instead of killing
// the process; its destructor restores the default actions. One at a time,
// on the main thread (the flag is process-wide, as the signal is).
class StopOnInterrupt {
 public:
  StopOnInterrupt();
  ~StopOnInterrupt();
  StopOnInterrupt(const StopOnInterrupt&) = delete;
  StopOnInterrupt& operator=(const StopOnInterrupt&) = delete;
};

// Set by SIGINT or SIGTERM under a StopOnInterrupt; never cleared (one
// command per process).
const std::atomic<bool>& stop_flag();

// Once stop_flag() is set: the exit code that says which signal stopped the
// command, 128 + its number (130 SIGINT, 143 SIGTERM), and its name
// ("SIGINT", "SIGTERM") for the line on stderr.
int interrupted_exit_code();
std::string interrupt_name();
int interrupt_signal();  // its number

// "SIGINT", "SIGTERM", "SIGHUP" or "signal N": how every interrupted
// command (these, and live and agree) names the signal that stopped it.
std::string signal_name(int signal);

// What result.json says first of a run a signal cut (run, explain, live):
// {"signal": "SIGINT", "at_s": "12.345s", "note": ...}; `at_ns`: where its
// history ends.
nlohmann::ordered_json interrupted_entry(int signal, int64_t at_ns);

}  // namespace locksim::cli
