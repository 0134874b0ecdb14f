// The workload: each client loops acquire -> hold for a seeded duration ->
// release, recording Jepsen ops and ground-truth held intervals.
//
// Written against Env and a small Truth interface only, so the simulation
// (fibers, virtual time) and the live harness (threads, the process clock)
// run the very same loop.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "algorithms/lock_algorithm.h"
#include "env/env.h"
#include "env/resource_connection.h"
#include "history/history.h"
#include "sim/resource_store.h"

namespace locksim::harness {

struct WorkloadParams {
  int clients = 5;
  Duration hold_min = Duration::seconds(1);  // critical-section length, drawn per hold
  Duration hold_max = Duration::seconds(3);
  // Pause after a failed acquire before the next one, so a client whose
  // algorithm gives up at once does not spin.
  Duration retry_pause = Duration::millis(50);
  // Idle time after a release before the client's next acquire, drawn per
  // gap (zero: none, and no draw). A quiet lock leaves free periods that a
  // contended one never does: what a lagging replica needs to lose a grant
  // without losing the release before it.
  Duration idle_min = Duration::zero();
  Duration idle_max = Duration::zero();
  // Draw the workload from the seed (harness/workload_draw.h: a `sweep
  // --swarm`'s runs) before the run is prepared; the drawn values replace
  // this flag, so result.json and the replay command carry them. Not a
  // setting of its own: a run is always replayed by the values drawn.
  bool draw = false;
  // A careful client never works past the lease's validity (Redlock's rule):
  // the hold is cut to lease.validity. Off by default, so a hold longer than
  // the TTL shows what a careless client does.
  bool hold_within_validity = false;
  std::string resource = "locksim:lock";
  // The guarded resource holders work on in their critical section (none:
  // they only sleep). With one, a holder reads at the start of its hold
  // (counter, inventory), works for the hold, and writes at its end, every
  // access carrying the lease's fencing token (sim/resource_store.h).
  ResourceParams store;
  // Bound on acquire attempts per client per run (Tiger Style: limit everything).
  int64_t max_ops_per_client = 1'000'000;
};

// What the loop needs from whoever runs it, beyond the Env.
class Truth {
 public:
  virtual ~Truth() = default;
  // True time, on the one clock histories are written in.
  virtual TimePoint true_now() = 0;
  // The run is over: the client should stop at its next step.
  virtual bool stopping() = 0;
  // A fresh Jepsen process id (never reused in a run).
  virtual int64_t fresh_process() = 0;
  // Serialised access to the run's recorder. Record ops and holds only here,
  // with the time read from true_now() inside the same call, so the history
  // stays in true-time order even with threads.
  virtual int64_t record(history::Op op, bool begin_hold, bool end_hold) = 0;
  // What the holder believes of the lease whose hold began with the last
  // record(): that it holds until its own clock reads `until_local`
  // (TimePoint + Duration::max() for a lease renewed in the background or
  // one without end). For the "holder never told" finding
  // (checkers/exposure_checker.h). Default: not kept (live mode).
  virtual void lease_believed(int client, TimePoint until_local) {
    (void)client;
    (void)until_local;
  }
  // The algorithm told client `client`, while it held, that the lock may be
  // lost (its hold() returned false). Default: not kept.
  virtual void lease_doubted(int client) { (void)client; }
  // Client `client`'s connection to the guarded resource, or nullptr when the
  // run has none (live mode, workload none).
  virtual ResourceConnection* resource(int client) {
    (void)client;
    return nullptr;
  }
};

// Runs client `client`'s loop until truth.stopping() or the op bound, as
// Jepsen process `first_process` (-1: the client's index, as for its first
// life; a client restarted after a crash continues under a fresh process).
// Throws whatever Env throws on cancellation (sim::Cancelled); the caller
// closes the client's open interval in that case. Asserted throughout: the
// client holds at most one lease, uses one only after an :ok acquire that
// returned it for params.resource with a token, releases it at most once,
// and records its ops in time and index order under never-reused processes.
void run_client(Env& env, algorithms::LockAlgorithm& algorithm, int client,
                const WorkloadParams& params, Truth& truth, int64_t first_process = -1);

// A client that crashes while it holds the lock never releases it: its lease
// frees when it expires, at a time nobody records. The history says so with a
// release invoked at the crash that completes :info (docs/explanation/checkers.md, "The history
// encoding"), so a history-only checker knows the lock may be free from then
// on; without it Knossos's mutex model would read the next holder as a
// violation. Returns {invoke, info} for `process` of `client`, to record in
// this order at the crash; `why` goes into the :info op's detail.
std::array<history::Op, 2> abandoned_release(int client, int64_t process, const std::string& why);

}  // namespace locksim::harness
