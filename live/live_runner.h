// Runs the workload live: real threads, real time, real Redis servers.
//
// The live counterpart of the simulated runner. Each client is a std::thread
// running harness::run_client through its own LiveEnv; all of them record
// into one history under a mutex, stamped with steady_clock time since the
// run began, so the history is in true-time order as the checkers expect.
//
// What "true time" means live: the instant the harness recorded the op, which
// is after the client saw its result (for :ok) and before it sent anything
// (for :invoke). A held interval therefore starts no earlier and ends no later
// than the client's real belief, so an overlap the checker reports is real.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/lock_algorithm.h"
#include "env/env.h"
#include "env/time.h"
#include "harness/workload.h"
#include "history/history.h"
#include "live/client_life.h"
#include "live/live_nemesis.h"

namespace locksim::live {

struct LiveOptions {
  // Bounds each connect and each command. Long enough for a loopback round
  // trip under load (AOF fsync=always on a slow disk), short enough that a
  // SIGSTOPped server turns into :info quickly.
  Duration command_timeout = Duration::millis(1000);
  // Where client exceptions go. Null: run_live throws after the run (see
  // below). Set: each is appended as "c<i>: <what>" and run_live returns the
  // history normally, for callers that keep them (harness::RunResult::errors).
  std::vector<std::string>* errors = nullptr;
  // Builds client i's Env. Null: a LiveEnv over `servers` (Redis). Set: the
  // backend's own Env (ZooKeeper's ZkLiveEnv); `servers` may then be empty.
  // Called on the client's thread; what it throws is that client's error.
  std::function<std::unique_ptr<Env>(int client)> make_env;
  // Runs on a thread of its own beside the clients (the nemesis,
  // live/live_nemesis.h), with a view of the run, and must return soon
  // after `done` is set, which happens once every client has returned.
  // What it reports through nemesis_error() goes where client errors go.
  std::function<void(LiveRunView& view, const std::atomic<bool>& done)> nemesis;
  // Each client's life (live/client_life.h), by client; empty: no client
  // crashes. A client whose life is crashed (its calls throw ClientCrashed)
  // waits for its restart and then runs again, with a fresh Env from
  // make_env and a fresh process id, until the run's end.
  std::vector<std::shared_ptr<ClientLife>> lives;
};

// Runs params.clients clients against `servers` (host, port) for `run_length`
// of real time and ends the history there, as the simulation ends a run at
// its duration: nothing is recorded at or after the end, a client asleep
// (a hold, a retry pause) stops at the end (live/run_end.h), an op in flight
// at the end stays open (its result, when it comes, is not recorded), and a
// hold open at the end counts as held until the end. The threads are joined
// once each has returned: at most one command, lock wait or session timeout
// after the end. Client i's first Jepsen process is i; later ones (after an :info)
// count up from params.clients.
//
// A client that throws is stopped: its in-flight op is completed as :info and
// its held interval ends with reason kCrash. Such an exception is a bug in the
// algorithm or the harness, not a fault being tested, so it must not pass
// silently: unless options.errors collects it, run_live throws
// std::runtime_error listing every one, after all threads have joined. No
// exception ever reaches std::terminate. Throws std::invalid_argument for an
// empty server list without options.make_env, or no clients.
history::History run_live(algorithms::LockAlgorithm& algorithm,
                          const harness::WorkloadParams& params,
                          const std::vector<std::pair<std::string, int>>& servers,
                          Duration run_length, uint64_t seed, const LiveOptions& options = {});

// The history of the run an interrupt cut (live/owned_processes.h's
// interrupt watcher ends a run in progress where it stands, as the run's end
// would), once: nullopt when no run was cut or it was taken already.
std::optional<history::History> interrupted_live_history();

}  // namespace locksim::live
