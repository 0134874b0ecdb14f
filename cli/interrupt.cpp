#include "cli/interrupt.h"

#include <csignal>

#include "env/assert.h"

namespace locksim::cli {

namespace {

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

bool g_installed = false;  // main thread only

void on_sigint(int) {
  g_stop.store(true);
}

}  // namespace

StopOnInterrupt::StopOnInterrupt() {
  LOCKSIM_ASSERT_MSG(!g_installed, "one StopOnInterrupt at a time");
  g_installed = true;
  std::signal(SIGINT, on_sigint);
}

StopOnInterrupt::~StopOnInterrupt() {
  LOCKSIM_ASSERT(g_installed);
  std::signal(SIGINT, SIG_DFL);
  g_installed = false;
}

const std::atomic<bool>& stop_flag() {
  return g_stop;
}

}  // namespace locksim::cli
