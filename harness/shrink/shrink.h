// Shrinking: from one failing run to the smallest failing scenario, by
// deterministic re-runs (issue 22, `locksim shrink`).
//
// A violating swarm seed carries several faults, five clients and a whole
// run; the reader wants the one fault that did it. Because a run is a pure
// function of its config, "does this smaller config still fail the same
// way?" is one run, and a search made of such questions finds a small
// failing config without any knowledge of why it fails. The search is
// QuickCheck's shrinking applied to a simulation's input (as Hypothesis does
// for data), with Zeller's ddmin for the fault list.
//
// The search (shrink()) takes the question as a function, so tests plant a
// fake one and the command line asks real runs (real_runs()). It is
// deterministic: the same config and the same answers give the same
// questions in the same order, hence the same result.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "checkers/check.h"
#include "checkers/explain.h"
#include "faults/fault_schedule.h"
#include "harness/run_config.h"

namespace locksim::harness::shrink {

// The finding a shrunk run must keep, one of checkers::Kind's findings that
// fail a run. Safety and consequence are kept apart although both are a
// "safety" finding for people: a candidate that damages the data without two
// holders (or the reverse) tells a different story than the run it came from.
enum class Finding { kNone, kSafety, kConsequence, kLiveness };

const char* to_string(Finding f);  // "none", "safety", "consequence", "liveness"

// The finding of a run's checks: damaged data (a deciding consequence
// check), else two holders (mutual exclusion), else a stuck lock; kNone when
// nothing deciding is invalid (a latent finding is not a failure). Damaged
// data first: a run that shows both is about its data (the holders' overlap
// is how the damage happened), and a shrink that kept only the overlap could
// lose the stale write the scenario was written to show.
Finding finding_of(const std::vector<checkers::Check>& checks);

// Whether a candidate's checks keep `wanted`. Safety and consequence: a
// deciding invalid check of that very kind (the candidate may show more).
// Liveness: a stuck lock and no safety finding, because a run with both is
// read as a violation (checkers::finding) and its scenario would replay as
// one, not as the liveness it was shrunk from.
bool keeps_finding(Finding wanted, const std::vector<checkers::Check>& checks);

// `prepared` (a config as prepare_run() left it: its profile's deployment
// applied) with the profile's drawn faults made explicit: profile "" and
// faults = prepared.faults followed by `drawn`, in that order (the order the
// run installs them in, so ties at one instant resolve as before). Targets
// stay as drawn: "@holder" and "@primary" remain symbolic. What a profile
// changed besides its faults (replicas, a client timeout, a drawn ttl) is in
// `prepared` already, so the result replays the same run without the profile;
// callers verify that with a run before shrinking it.
RunConfig materialized(const RunConfig& prepared, const faults::FaultSchedule& drawn);

// How many servers the config's deployment runs (masters and replicas,
// primary and replicas, the ensemble), which shrinking may lower.
int servers_of(const RunConfig& config);

// Whether a candidate config fails the same way. Deterministic.
using Fails = std::function<bool(const RunConfig& config)>;

// Real runs: prepare_run + run_prepared, judged by keeps_finding(wanted)
// and, when `cause` is a mechanism explain found (not kNone or
// kUndetermined), by the story explain tells of the candidate: the same
// mechanism. A candidate that keeps the finding but not its cause (a
// failover run cut to a crash too short for any failover, told as a
// restart that lost the lock) is a counterexample of something else, and a
// sweep's report would give its cause as the cell's. A candidate that does
// not validate (a fault naming a client the candidate no longer has) does
// not fail: it is no smaller scenario.
Fails real_runs(Finding wanted, checkers::Mechanism cause = checkers::Mechanism::kNone);

// The mechanism explain finds in a run of `config` (its lock traced).
checkers::Mechanism cause_of(const RunConfig& config);

struct Options {
  // The bound on candidate runs (questions answered from the cache are free).
  // Tiger Style: a search without a bound is a search that can hang a CI job.
  int runs_max = 300;
  static constexpr int kRunsMaxMax = 100'000;  // what --max-runs accepts
  // Set (e.g. by SIGINT) to stop asking; the smallest failing config so far
  // is the result.
  const std::atomic<bool>* stop = nullptr;
  // Called after each candidate run with the runs so far and the smallest
  // failing config so far (the progress line).
  std::function<void(int runs, const RunConfig& smallest)> on_run;
};

enum class Stopped { kDone, kRunsMax, kInterrupted };

struct Result {
  RunConfig smallest;  // fails (as the caller's `fails` said), never larger than the input
  int runs = 0;        // candidate runs asked (<= runs_max)
  Stopped stopped = Stopped::kDone;
  // Whether the final fault list passed its 1-minimality check (every single
  // removal asked and refused); false only when the search was stopped.
  bool one_minimal = false;
};

// Shrinks `failing` (which the caller knows fails: not asked again), keeping
// its seed and algorithm, in rounds of:
//   1. the fault list by ddmin, to a 1-minimal set;
//   2. fewer clients (the fewest that fail, from one up);
//   3. each fault smaller: a shorter length (pause, crash with a restart,
//      timed partition, delay, loss), a smaller drift, jump, delay or loss
//      rate, fewer nodes on each side of a partition;
//   4. each fault as early as it still fails, then a shorter run (whole
//      seconds), then each fault as late as it still fails inside that run
//      (so the later start never lengthens the run), then narrower holds;
// until a round changes nothing (at most kRoundsMax rounds) or the budget
// ends. Every answer is a full run of the candidate on the same seed.
Result shrink(const RunConfig& failing, const Fails& fails, const Options& options);

// How many times the rounds repeat at most: each later round starts from a
// smaller config, and in practice the second round finds nothing; the bound
// keeps a pathological predicate from looping.
constexpr int kRoundsMax = 4;

}  // namespace locksim::harness::shrink
