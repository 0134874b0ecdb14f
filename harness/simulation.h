// Runs one scenario in the deterministic simulation and returns its history.
//
// Builds the world (servers, client nodes, network, nemesis) from a RunConfig,
// runs every client's workload loop in its own fiber until the configured
// duration of virtual time has passed, tears everything down, and hands back
// what happened. Checking is separate (checkers/).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "checkers/exposure_checker.h"
#include "checkers/lock_trace.h"
#include "faults/nemesis.h"
#include "harness/prepared_run.h"
#include "harness/run_config.h"
#include "history/history.h"
#include "sim/resource_store.h"

namespace locksim::harness {

// See SimWatch::poll.
using RunPoll = std::function<bool(TimePoint now, uint64_t events)>;
// How often a run asks its poll: about 20-60 ms of a run at 1-3 M events/s,
// often enough for Ctrl-C, and 2^-16 of the events for the cost.
constexpr uint64_t kPollEveryEvents = uint64_t{1} << 16;

struct SimOutput {
  history::History history;
  uint64_t events = 0;              // World events executed
  uint64_t messages_dropped = 0;    // by the network (loss past the retransmission limit)
  uint64_t server_commands = 0;     // commands/statements executed by the servers
  int failovers = 0;                // replicas promoted (leaders elected) by the backend
  uint64_t deadlocks = 0;           // transactions the database killed to break deadlocks
  std::vector<std::string> errors;  // exceptions caught inside fibers
  // What the backend reports after the run (sim::Deployment::notes()).
  std::vector<std::pair<std::string, std::string>> backend_notes;
  // The poll (SimWatch::poll) stopped the run before its duration: the
  // history ends there (history.run_length), its ops in flight open.
  bool stopped = false;
  // The guarded store's log, every access in execution order (empty without
  // a store: workload none).
  std::vector<StoreAccess> store_log;
  // Where the store would have granted the lock while a client held it.
  checkers::ExposureSamples exposure;
  // The faults the config's profile drew for this seed and deployment
  // (applied besides config.faults); empty without a profile.
  faults::FaultSchedule profile_faults;
  // The lock on each server over the run (asked for: trace_lock), else
  // unsupported and empty.
  checkers::LockTrace lock_trace;
};

// How a run watches itself besides its history; neither changes the history.
struct SimWatch {
  bool trace_lock = false;  // also record lock_trace (harness/lock_tracer.h)
  // The exposure monitor asks the store after every event of a hold, even
  // when the backend's stamp says nothing it answers from changed: the
  // plain way, which tests hold the stamped way against
  // (tests/exposure_stamp_test.cpp). Slower; the same windows.
  bool exposure_ignores_stamp = false;
  // The same for the readers of the lock's states, the watch that faults
  // "on grant" wait on and the lock tracer: they read after every event
  // (tests/lock_view_stamp_test.cpp). The same history and trace.
  bool lock_views_ignore_stamp = false;
  // Asked now and then between two events (every kPollEveryEvents) with the
  // virtual time and the events run so far; false stops the run there
  // (SimOutput::stopped). It must only look: a command's progress line and
  // its Ctrl-C. Empty: never asked.
  RunPoll poll;
};

// Runs the prepared config's scenario; never throws for what happens inside
// the run (a fiber's exception is kept in errors).
SimOutput run_simulation(const PreparedRun& run, SimWatch watch = {});

}  // namespace locksim::harness
