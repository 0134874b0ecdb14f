#include "cli/interrupt.h"

#include <csignal>
#include <string>

#include "cli/exit_codes.h"
#include "env/assert.h"
#include "env/parse.h"

namespace locksim::cli {

namespace {

std::atomic<bool> g_stop{false};
// The first signal's number; 0 before any. Read only after g_stop is seen set.
std::atomic<int> g_signal{0};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");
static_assert(std::atomic<int>::is_always_lock_free, "set from a signal handler");

bool g_installed = false;  // main thread only

void on_signal(int signal) {
  int none = 0;
  g_signal.compare_exchange_strong(none, signal);  // the first signal names the stop
  g_stop.store(true);
}

}  // namespace

StopOnInterrupt::StopOnInterrupt() {
  LOCKSIM_ASSERT_MSG(!g_installed, "one StopOnInterrupt at a time");
  g_installed = true;
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}

StopOnInterrupt::~StopOnInterrupt() {
  LOCKSIM_ASSERT(g_installed);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  g_installed = false;
}

const std::atomic<bool>& stop_flag() {
  return g_stop;
}

int interrupted_exit_code() {
  LOCKSIM_ASSERT_MSG(g_stop.load(), "asked only once a signal stopped the command");
  return g_signal.load() == SIGTERM ? kExitTerminated : kExitInterrupted;
}

std::string interrupt_name() {
  LOCKSIM_ASSERT_MSG(g_stop.load(), "asked only once a signal stopped the command");
  return signal_name(g_signal.load());
}

int interrupt_signal() {
  LOCKSIM_ASSERT_MSG(g_stop.load(), "asked only once a signal stopped the command");
  return g_signal.load();
}

nlohmann::ordered_json interrupted_entry(int signal, int64_t at_ns) {
  return {{"signal", signal_name(signal)},
          {"at_s", format_seconds(at_ns)},
          {"note", "the run was cut here; its history ends at the interrupt"}};
}

std::string signal_name(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "signal " + std::to_string(signal);
  }
}

}  // namespace locksim::cli
