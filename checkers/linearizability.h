// The exact linearizability checker for a lock: does a Jepsen history of
// :acquire and :release ops fit Knossos's `mutex` model (or its owner-aware
// variant)? It reads the ops alone, never the simulator's ground truth, so it
// also judges live runs and other people's histories (`locksim check`).
//
// The model, exactly as Knossos's `knossos.model/mutex` defines it: one lock,
// free at the start; :acquire of a held lock and :release of a free one are
// inconsistent. The owner-aware variant (kOwnerMutex) also says that only the
// process holding the lock may release it — what lock users actually mean, and
// what Knossos's model cannot say.
//
// How ops are read (Jepsen's rules, as Knossos reads them):
//   - real-time order is the history's order (the :time field is not used):
//     op A precedes op B when A's completion comes before B's invocation;
//   - :ok ops happened, once, somewhere between invocation and completion;
//   - :fail ops never happened;
//   - :info ops (and invocations the history leaves open) may have happened
//     at any time after their invocation, or never;
//   - ops whose process is not a client (is_client_op() false: the nemesis)
//     are skipped, as Jepsen's checkers skip them.
//
// Why a greedy search is exact here (proved in linearizability.cpp, and
// checked against brute force over all orderings in tests/linearizability_test.cpp):
// the model's states alternate free/held, so a linearization is an
// alternating sequence acquire, release, acquire, ... and the only choice at
// each step is which op of the needed kind comes next. Taking, among the ops
// invoked before the earliest pending :ok completion, the one that completes
// earliest (:info: never) can be swapped into any valid linearization, so if
// the greedy gets stuck no linearization exists. That makes the checker
// decisive (valid or invalid, never unknown) and O(n log n), where Knossos's
// general search is exponential in the worst case.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checkers/mutex_checker.h"
#include "history/history.h"

namespace locksim::checkers {

enum class MutexModel {
  kMutex,       // Knossos's `mutex`: any process may release a held lock
  kOwnerMutex,  // only the process whose acquire holds the lock may release it
};

const char* to_string(MutexModel m);  // "mutex", "owner-mutex"
// "mutex" or "owner-mutex"; nullopt for anything else.
std::optional<MutexModel> mutex_model_from(std::string_view name);

// A break of Jepsen's history rules, which Knossos rejects outright (it
// throws): a process that invokes while its previous op is still open, that
// completes an op it never invoked, that invokes again after an :info (its
// op may still be running), or whose completion names another :f.
struct HistoryRuleBreak {
  size_t position = 0;  // in the ops vector
  int64_t index = 0;    // the offending op's :index
  std::string rule;     // one sentence naming the process and the ops involved
};

// The first rule break among the client ops, or nullopt. O(n).
std::optional<HistoryRuleBreak> find_rule_break(const std::vector<history::Op>& ops);

// One call: an invocation and its completion (if any), by op index.
struct LockCall {
  int64_t process = 0;
  int client = -1;  // locksim's client, -1 when unknown (a history from elsewhere)
  history::OpF f = history::OpF::kAcquire;
  history::OpType outcome = history::OpType::kInfo;  // kOk, kFail or kInfo (kInfo also for never completed)
  int64_t invoke_index = -1;
  int64_t complete_index = -1;   // -1: never completed
  int64_t complete_time_ns = 0;  // the completion's :time (the invocation's if none)
};

struct LinearizabilityVerdict {
  Verdict::Kind kind = Verdict::Kind::kValid;  // kValid or kInvalid; never kUnknown
  MutexModel model = MutexModel::kMutex;
  std::string checker;  // "linearizability (mutex)" or "linearizability (owner-mutex)"

  int64_t client_ops = 0;  // ops judged
  int64_t calls = 0;       // invocations among them
  int64_t info_calls = 0;  // calls with unknown outcome (:info or never completed)
  int64_t fail_calls = 0;  // calls that failed, ignored by the model

  // When invalid: the :ok op that cannot be linearized, the op the lock's
  // state came from at that point (the acquire holding it, or the release
  // that freed it; absent at the very start), and the shortest prefix of the
  // history that cannot be linearized: every op up to and including the
  // completion of `unlinearizable`: op index prefix_end_index (an index of
  // the whole history, nemesis ops counted), prefix_ops client ops (the
  // nemesis ops the checker skips not counted).
  std::optional<LockCall> unlinearizable;
  std::optional<LockCall> state_from;
  int64_t prefix_end_index = -1;
  int64_t prefix_ops = 0;

  // One paragraph for people, in the words of the mutual-exclusion summary.
  std::string explanation;
};

// Checks `ops` (in real-time order) against `model`. Precondition: no rule
// break (find_rule_break(ops) is nullopt; asserted). O(n log n) time, O(n)
// memory.
LinearizabilityVerdict check_linearizable(const std::vector<history::Op>& ops,
                                          MutexModel model = MutexModel::kMutex);

// "c2 (process 1)" for a call from locksim's own runs, "process 1" otherwise.
std::string call_actor(const LockCall& call);

}  // namespace locksim::checkers
