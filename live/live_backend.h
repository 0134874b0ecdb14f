// A backend's live side: what harness::BackendSpec is to a simulated run,
// this is to a live one. It names what the backend cannot do live, starts
// its real servers on loopback, gives each client its Env, runs the
// workload, and stops the servers.
//
// Why a second list beside harness::all_backends(): live/ sits above
// harness/ (docs/architecture.md), so a BackendSpec cannot hold live code
// without the harness linking hiredis, libmariadb and the ZooKeeper client.
// The two lists are joined by name, and a test checks that every
// BackendSpec has exactly one live side. live_run.cpp reaches backends only
// through this list, so it names none.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/lock_algorithm.h"
#include "env/env.h"
#include "harness/backends.h"
#include "harness/run_config.h"
#include "harness/run_result.h"
#include "history/history.h"
#include "live/live_nemesis.h"
#include "live/tcp_relay.h"

namespace locksim::live {

struct LiveBackend {
  std::string name;  // the harness::BackendSpec::name it serves
  // Throws ConfigError naming the setting (harness::field_name) for what
  // this backend cannot do live (replicas, a server count or a precision the
  // real server does not offer). Called before any server starts.
  std::function<void(const harness::RunConfig& config)> refuse_unsupported;
  // Starts the servers, runs config.workload for config.duration of real
  // time, stops every server it started (also when it throws), and returns
  // the history. Client errors go to result.errors; what the real servers
  // said about the run (their addresses, their own counters) to
  // result.backend_notes and the result's counters. Precondition:
  // refuse_unsupported(config) returned.
  std::function<history::History(const harness::RunConfig& config,
                                 algorithms::LockAlgorithm& algorithm, harness::RunResult& result)>
      run;
  // Whether run() applies config.faults (live/live_nemesis.h). A backend
  // without gets no faults: live_run refuses them before anything starts.
  bool applies_faults = false;
};

const std::vector<LiveBackend>& live_backends();

// The live side of `backend`. Precondition: it has one (the test
// LiveBackends.EveryBackendHasOneLiveSide holds it).
const LiveBackend& live_backend_of(const harness::BackendSpec& backend);

// run_live (live_runner.h) for `config`'s workload, length and seed, with
// client i's Env from `make_env(i)` (a backend's own Env over the servers it
// started) and each client's error kept in result.errors: what every
// backend without Redis's server list runs.
history::History run_live_clients(const harness::RunConfig& config,
                                  algorithms::LockAlgorithm& algorithm, harness::RunResult& result,
                                  std::function<std::unique_ptr<Env>(int client)> make_env);

// The standing one-way latency of a live run's client-server links: the
// scenario's network.latency_base in whole milliseconds (the relay's
// resolution), zero below 1.5 ms (see the definition). Why: a scenario that gives its
// links a latency (50 ms) times its faults by it (a partition while the
// first grant's reply travels back), and loopback answers in well under a
// millisecond, so live must carry the latency itself to fault the same
// bytes; the simulation's default (0.2 ms) is what loopback already gives.
// The jitter is not drawn live: the machine's scheduling brings its own.
std::chrono::milliseconds link_latency(const harness::RunConfig& config);
// Makes `relay` a client-server link of `latency` (> 0): each chunk waits it,
// both ways, and a new connection's first bytes wait the handshake's round
// trip before it, as a simulated client's dial does (sim/rpc.h).
void set_link_latency(TcpRelay& relay, std::chrono::milliseconds latency);
// Throws ConfigError naming network.latency_base when `config` has a link
// latency (link_latency) and the backend's live side, named `backend`, puts
// no relay on its client links to carry it: it is not expressible live.
void refuse_link_latency(const harness::RunConfig& config, const std::string& backend);
// The port `client` reaches `server` (listening on `port`) at in a live run
// of `config`: `port` itself, or with link faults or a link latency (Redis's
// and ZooKeeper's client links) a relay of the client's own in front of it,
// made here and kept in `relays`, registered as the link in `targets`, and
// carrying that latency. So a partition can cut one client off one server.
int client_link_port(const harness::RunConfig& config, const std::string& client,
                     const std::string& server, int port, LiveTargets& targets,
                     std::vector<std::unique_ptr<TcpRelay>>& relays);

// Each backend's live side, in its own file (live/backend_<name>.cpp).
LiveBackend redis_live_backend();
LiveBackend zookeeper_live_backend();
LiveBackend mysql_live_backend();

}  // namespace locksim::live
