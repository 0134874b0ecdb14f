// Everything one run produced: what ran (enough to replay it), the history,
// the checkers' verdicts, and the counters a report shows at a glance.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkers/checker_list.h"
#include "checkers/lock_trace.h"
#include "faults/fault_schedule.h"
#include "history/history.h"

namespace locksim::harness {

// A run's result is first the checkers' verdicts on it (checkers/checker_list.h:
// each detailed verdict, and the one list `checks` that decides the verdict,
// the finding and the exit code), then what ran and what it cost.
struct RunResult : checkers::Verdicts {
  std::string algorithm;
  uint64_t seed = 0;
  nlohmann::json params;  // everything needed to replay, besides algorithm and seed

  // Client ops and the nemesis's (the faults applied, their ends, skipped
  // faults: a report's timeline markers) in one stream, as in Jepsen.
  history::History history;

  // Op counts, of client ops only (the nemesis's are not the workload's);
  // derived from the history by fill_counts().
  int64_t client_ops = 0;    // every client op, invocations included
  int64_t acquisitions = 0;  // acquire :ok
  int64_t acquire_fail = 0;
  int64_t acquire_info = 0;
  int64_t releases_ok = 0;
  int64_t releases_fail = 0;
  int64_t releases_info = 0;

  int64_t events = 0;     // simulated events executed (0 in live mode)
  int64_t deadlocks = 0;  // transactions the database killed to break a deadlock (MySQL)
  // Exceptions caught inside client fibers, verbatim, in the order they were
  // caught. A fiber must not let one escape (that would std::terminate), so
  // they are kept here and make an otherwise valid run "unknown".
  std::vector<std::string> errors;
  std::string replay_command;  // "locksim run --algorithm ... --seed 42 ..."
  // The fault profile ("" for none) and the faults it drew for this seed and
  // deployment, as the nemesis applied them (a report writes each in --fault
  // syntax, FaultEvent::describe()).
  std::string profile;
  faults::FaultSchedule profile_faults;
  // What the backend said about the run, as (key, text) in its order: e.g.
  // ZooKeeper's negotiated session timeout and its expired sessions. Reports
  // show them without knowing the backend.
  std::vector<std::pair<std::string, std::string>> backend_notes;
  // The lock as each server stored it (RunExtras::trace_lock), for explain
  // and the timeline's server lanes; unsupported when not recorded.
  checkers::LockTrace lock_trace;
};

// Sets the op counters of `result` from result.history.ops: client_ops, and
// the completions by outcome. Nemesis ops are skipped, as Jepsen's checkers do.
void fill_counts(RunResult& result);

// The run's verdict: the checks' merge (invalid over unknown over valid).
checkers::Validity overall_verdict(const RunResult& result);

}  // namespace locksim::harness
