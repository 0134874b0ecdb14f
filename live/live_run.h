// One live run, end to end: the backend's live side (live/live_backend.h)
// starts its real servers on loopback, the workload runs against them with
// real threads and real time, the servers stop (also on error), and the
// history is judged by the same checker list as a simulated one.
#pragma once

#include <optional>

#include "harness/prepared_run.h"
#include "harness/run_config.h"
#include "harness/run_result.h"

namespace locksim::live {

// Uses config.algorithm and its params, workload, duration (real time!),
// seed, and the backend's settings its live side reads (one redis-server per
// redis.masters; a 1- or 3-server ZooKeeper ensemble with zookeeper.tick;
// one mariadbd with mysql.lock_wait_timeout in whole seconds) and its
// faults (live/live_nemesis.h). Throws ConfigError, before any
// server starts, for what check_live_run refuses; std::runtime_error when a
// server cannot be started.
harness::RunResult run_live_and_check(const harness::PreparedRun& run);

// After an interrupt cut the live run in progress (live/owned_processes.h):
// its history up to the cut, judged as run_live_and_check judges a whole
// one; nullopt when no run was in progress. For the interrupt's save, on
// the watcher's thread.
std::optional<harness::RunResult> interrupted_live_result(const harness::RunConfig& config);

// What run_live_and_check refuses, without starting anything: throws
// ConfigError naming the setting or the fault live mode cannot apply.
void check_live_run(const harness::RunConfig& config);

}  // namespace locksim::live
