#include "checkers/linearizability.h"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <limits>
#include <queue>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "env/assert.h"
#include "env/parse.h"

// Why the greedy is exact (the argument the property test checks by brute force).
//
// Number the history's events by position. A call c has an invocation inv(c)
// and a completion ret(c) (infinity for :info and never-completed calls). A
// linearization is a sequence of calls (all :ok calls, any subset of the
// unknown ones, no :fail ones) with points p(c) in (inv(c), ret(c)), strictly
// increasing along the sequence, that the model accepts.
//
// Let D be the earliest completion among the :ok calls not yet placed. The
// next call placed must get a point below D (D's own call must come at or
// after it), and any call with inv < D can get one: every point placed so
// far is below the D of its own step, and D never decreases. So the state of
// the search is just (calls placed, model state), and a call is *eligible*
// when inv < D.
//
// mutex: the model accepts exactly the alternating sequences acquire,
// release, acquire, ... starting with acquire. Among the eligible calls of
// the needed kind take the one with the earliest ret. Exchange argument: if a
// valid sequence S takes Y here and the greedy's X (ret(X) <= ret(Y)) later
// or never, swap them. Y is eligible at X's old slot (inv(Y) < D now <= D
// then); in between, the pending set holds Y instead of X, so each D there
// is >= what it was and every call stays eligible. If X was never placed it
// is unknown-outcome, so ret(Y) = infinity too and Y can simply be dropped.
// Hence if the greedy gets stuck (no eligible call of the needed kind while
// :ok calls remain) no linearization exists.
//
// owner-mutex: a release must come right after the acquire of the same
// process, and a process's calls are sequential, so the release that follows
// an acquire is forced: its process's next non-failed call. An unknown-outcome
// acquire is never worth placing (its process never invokes again, so the lock
// would stay held forever), and two :ok acquires X, Y with ret(X) < ret(Y)
// can only be ordered X first (Y's release is invoked after ret(Y) > ret(X)),
// so the choice is forced there too: the greedy takes the eligible :ok
// acquire that completes first.
//
// Shortest failing prefix. A prefix of a history reads the calls it leaves
// open as unknown-outcome. Linearizability is prefix-closed (a linearization
// of a longer prefix, cut after its last call that completes in the shorter
// one, linearizes the shorter one: nothing invoked later can come before a
// completed call), so the shortest prefix that cannot be linearized is found
// by galloping and bisection. The search starts at ret(Z), Z being the call
// the greedy is stuck on: everything before ret(Z) is linearizable (the
// greedy's placed calls all have inv < ret(Z), and cutting only turns
// obligations into options). It need not end there: a call that completes
// :fail after ret(Z) is open, hence possible, in the shorter prefixes.

namespace locksim::checkers {

namespace {

constexpr size_t kNone = std::numeric_limits<size_t>::max();
constexpr size_t kNever = kNone;  // the completion of an unknown-outcome call

// A call as the search needs it: positions in the ops, not copies of them
// (32 bytes where a LockCall copy made it 80: a 1 M-op history has half a
// million calls, and `locksim check` must stay under 200 MB). lock_call()
// makes the LockCall a verdict shows.
struct Call {
  size_t invoke_pos = 0;
  size_t done_pos = kNone;           // its completion (:ok :fail :info), kNone if never
  size_t next_same_process = kNone;  // the process's next non-failed call
  history::OpF f = history::OpF::kAcquire;
  history::OpType outcome = history::OpType::kInfo;  // kInfo also for never completed

  bool must() const { return outcome == history::OpType::kOk; }  // must be linearized
  // Where it completes for the search: :info and open calls never do (they
  // may take effect any time later).
  size_t complete_pos() const { return outcome == history::OpType::kInfo ? kNever : done_pos; }
};

LockCall lock_call(const std::vector<history::Op>& ops, const Call& c) {
  const history::Op& invoke = ops[c.invoke_pos];
  // Pair: the call was made from this invocation.
  LOCKSIM_ASSERT(invoke.type == history::OpType::kInvoke && invoke.f == c.f);
  LockCall l{invoke.process, invoke.client, c.f, c.outcome, invoke.index, -1, invoke.time_ns};
  if (c.done_pos != kNone) {
    l.complete_index = ops[c.done_pos].index;
    l.complete_time_ns = ops[c.done_pos].time_ns;
  }
  return l;
}

struct Paired {
  std::vector<Call> calls;  // non-failed calls, in invocation order
  int64_t client_ops = 0;
  int64_t calls_total = 0;
  int64_t info_calls = 0;
  int64_t fail_calls = 0;
  std::optional<HistoryRuleBreak> rule_break;
};

struct ProcessState {
  size_t open = kNone;      // position in `all` of the open call
  size_t open_pos = kNone;  // position in the ops of its invocation
  int64_t info_index = -1;  // the :info op that retired the process, or -1
};

// Something per process. Jepsen numbers processes from 0 and gives a client
// a fresh one after each :info, so they are small numbers: those index a
// vector (a hash lookup per op was a tenth of checking a 1 M-op history);
// the rest go to a map. Lookups only, never iterated: no order can leak.
template <typename T>
class ProcessTable {
 public:
  // Processes in [0, dense_max) are kept in a vector of up to dense_max
  // entries: callers pass a bound in proportion to the history's ops.
  ProcessTable(size_t dense_max, T init) : dense_max_(dense_max), init_(init) {}

  // The entry of `process`, `init` the first time. Valid until the next call.
  T& operator[](int64_t process) {
    if (process < 0 || static_cast<uint64_t>(process) >= dense_max_) {
      return sparse_.try_emplace(process, init_).first->second;
    }
    const auto p = static_cast<size_t>(process);
    if (p >= dense_.size())
      dense_.resize(std::min(dense_max_, std::max(p + 1, dense_.size() * 2)), init_);
    LOCKSIM_ASSERT(p < dense_.size() && dense_.size() <= dense_max_);
    return dense_[p];
  }

 private:
  size_t dense_max_;
  T init_;
  std::vector<T> dense_;
  std::unordered_map<int64_t, T> sparse_;
};

// The bound of a ProcessTable over `ops` ops: an eighth of them (a history
// has at most one process per op, and the vector's memory stays a small
// part of the ops').
size_t dense_processes_max(size_t ops) {
  return ops / 8 + 64;
}

HistoryRuleBreak rule_break(size_t pos, const history::Op& op, std::string rule) {
  return HistoryRuleBreak{pos, op.index, std::move(rule)};
}

// Checks one op against its process's state; returns the broken rule, if any.
std::optional<HistoryRuleBreak> check_op(size_t pos, const history::Op& op, const ProcessState& st,
                                         const std::vector<history::Op>& ops) {
  if (op.type == history::OpType::kInvoke) {
    if (st.info_index >= 0) {
      return rule_break(pos, op,
                        fmt::format("process {} invokes op {} after its op {} ended :info (an op "
                                    "of unknown outcome may still be running, so its process "
                                    "must never invoke again)",
                                    op.process, op.index, st.info_index));
    }
    if (st.open_pos != kNone) {
      return rule_break(pos, op,
                        fmt::format("process {} invokes op {} while its op {} is still open (a "
                                    "process runs one op at a time)",
                                    op.process, op.index, ops[st.open_pos].index));
    }
    return std::nullopt;
  }
  if (st.open_pos == kNone) {
    return rule_break(pos, op,
                      fmt::format("process {} completes op {} (:{} :{}) that it never invoked",
                                  op.process, op.index, to_string(op.type), to_string(op.f)));
  }
  const history::Op& open = ops[st.open_pos];
  if (open.f != op.f) {
    return rule_break(
        pos, op,
        fmt::format("op {} completes a :{} but process {} invoked a :{} (op {})", op.index,
                    to_string(op.f), op.process, to_string(open.f), open.index));
  }
  return std::nullopt;
}

// Pairs invocations with completions among ops[0, end), applying Jepsen's
// rules; stops at the first rule break. Calls still open at `end` are
// unknown-outcome. With `rules_only`, only the rules are checked: no calls
// are made (find_rule_break needs none, and a 1 M-op history is paired twice).
Paired pair_calls(const std::vector<history::Op>& ops, size_t end, bool rules_only = false) {
  LOCKSIM_ASSERT(end <= ops.size());
  Paired out;
  std::vector<Call> all;
  // Exactly as many as there are invocations: a vector that grows holds its
  // old and new buffers at once.
  if (!rules_only) {
    all.reserve(static_cast<size_t>(
        std::count_if(ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(end),
                      [](const history::Op& op) { return op.type == history::OpType::kInvoke; })));
  }
  ProcessTable<ProcessState> processes(dense_processes_max(end), ProcessState{});
  for (size_t pos = 0; pos < end; ++pos) {
    const history::Op& op = ops[pos];
    if (!history::is_client_op(op)) continue;
    ++out.client_ops;
    ProcessState& st = processes[op.process];
    if (auto broken = check_op(pos, op, st, ops)) {
      out.rule_break = std::move(broken);
      return out;
    }
    if (op.type == history::OpType::kInvoke) {
      st.open_pos = pos;
      if (rules_only) continue;
      Call c;
      c.invoke_pos = pos;
      c.f = op.f;
      st.open = all.size();
      LOCKSIM_ASSERT(all.size() < all.capacity());  // the reserve counted every invocation
      all.push_back(c);
      continue;
    }
    st.open_pos = kNone;
    if (op.type == history::OpType::kInfo) st.info_index = op.index;
    if (rules_only) continue;
    Call& c = all[st.open];
    // Pair: the call completed here is the one its process invoked.
    LOCKSIM_ASSERT(c.f == op.f && c.done_pos == kNone);
    st.open = kNone;
    c.outcome = op.type;
    c.done_pos = pos;
  }
  if (rules_only) return out;
  out.calls_total = static_cast<int64_t>(all.size());
  for (const Call& c : all) {
    if (c.outcome == history::OpType::kFail) ++out.fail_calls;
    if (c.outcome == history::OpType::kInfo) ++out.info_calls;
  }
  // In place: a second vector would hold the calls twice.
  std::erase_if(all, [](const Call& c) { return c.outcome == history::OpType::kFail; });
  out.calls = std::move(all);
  ProcessTable<size_t> next(dense_processes_max(end), kNone);  // the process's call after i
  for (size_t i = out.calls.size(); i-- > 0;) {
    size_t& later = next[ops[out.calls[i].invoke_pos].process];
    out.calls[i].next_same_process = later;
    later = i;
  }
  return out;
}

using Entry = std::pair<size_t, size_t>;  // (completion position, call number)
using MinHeap = std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>>;

struct GreedyResult {
  bool linearizable = true;
  size_t stuck = kNone;       // the :ok call that could not be placed
  size_t state_from = kNone;  // the last call placed before it
};

// The greedy of the comment at the top of this file.
class Greedy {
 public:
  Greedy(const std::vector<Call>& calls, MutexModel model)
      : calls_(calls), model_(model), placed_(calls.size(), 0) {
    for (size_t i = 0; i < calls.size(); ++i) {
      if (calls[i].must()) {
        deadlines_.emplace(calls[i].complete_pos(), i);
        ++remaining_;
      }
    }
  }

  GreedyResult run() {
    GreedyResult r;
    history::OpF need = history::OpF::kAcquire;
    while (remaining_ > 0) {
      while (placed_[deadlines_.top().second]) deadlines_.pop();
      const size_t deadline = deadlines_.top().first;
      admit_before(deadline);
      const size_t next = choose(need, deadline);
      if (next == kNone) {
        r.linearizable = false;
        r.stuck = deadlines_.top().second;
        r.state_from = last_;
        return r;
      }
      LOCKSIM_ASSERT_MSG(calls_[next].f == need, "the model alternates acquire and release");
      LOCKSIM_ASSERT_MSG(calls_[next].invoke_pos < deadline, "placed calls are eligible");
      placed_[next] = 1;
      if (calls_[next].must()) --remaining_;
      last_ = next;
      need = need == history::OpF::kAcquire ? history::OpF::kRelease : history::OpF::kAcquire;
    }
    return r;
  }

 private:
  // Queues every call invoked before `deadline`; D never decreases, so each
  // call is queued once.
  void admit_before(size_t deadline) {
    for (; admitted_ < calls_.size() && calls_[admitted_].invoke_pos < deadline; ++admitted_) {
      const Call& c = calls_[admitted_];
      if (model_ == MutexModel::kOwnerMutex) {
        // Releases are forced (the holder's next call); unknown-outcome
        // acquires would hold the lock forever.
        if (c.f == history::OpF::kAcquire && c.must())
          eligible_[0].emplace(c.complete_pos(), admitted_);
        continue;
      }
      eligible_[c.f == history::OpF::kAcquire ? 0 : 1].emplace(c.complete_pos(), admitted_);
    }
  }

  // The call to place next, or kNone when stuck.
  size_t choose(history::OpF need, size_t deadline) {
    if (model_ == MutexModel::kOwnerMutex && need == history::OpF::kRelease) {
      const size_t r = calls_[last_].next_same_process;
      const bool ok =
          r != kNone && calls_[r].f == history::OpF::kRelease && calls_[r].invoke_pos < deadline;
      return ok ? r : kNone;
    }
    MinHeap& q = eligible_[need == history::OpF::kAcquire ? 0 : 1];
    if (q.empty()) return kNone;
    const size_t chosen = q.top().second;
    q.pop();
    return chosen;
  }

  const std::vector<Call>& calls_;
  const MutexModel model_;
  std::vector<char> placed_;
  MinHeap deadlines_;    // :ok calls by completion; placed ones are skipped lazily
  MinHeap eligible_[2];  // [0] acquires, [1] releases, invoked before the current D
  size_t admitted_ = 0;
  size_t remaining_ = 0;  // :ok calls not yet placed
  size_t last_ = kNone;
};

bool prefix_linearizable(const std::vector<history::Op>& ops, MutexModel model, size_t length) {
  return Greedy(pair_calls(ops, length).calls, model).run().linearizable;
}

// The length of the shortest prefix that cannot be linearized, given that
// ops[0, lo) can be and ops[0, hi) cannot: gallop up from lo, then bisect.
// O(log(answer - lo)) greedy runs, each O(n log n); only invalid histories pay it.
size_t shortest_failing_prefix(const std::vector<history::Op>& ops, MutexModel model, size_t lo,
                               size_t hi) {
  LOCKSIM_ASSERT(lo < hi && hi <= ops.size());
  for (size_t step = 1; lo + step < hi; step *= 2) {
    if (!prefix_linearizable(ops, model, lo + step)) {
      hi = lo + step;
      break;
    }
    lo += step;
  }
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    (prefix_linearizable(ops, model, mid) ? lo : hi) = mid;
  }
  return hi;
}

std::string when(const LockCall& c) {
  return c.complete_time_ns > 0 ? " at " + format_seconds(c.complete_time_ns) : "";
}

// The call without its actor, named as every text names it: by the op at
// which its client's belief changed. A granted acquire is its :ok op (the
// client began to hold there; the mutual-exclusion and exposure lines name the
// same op), any other call its :invoke op.
//   "acquire op 4 at 1.028s, invoked at op 0", "release op 7, :ok at op 9 at 2.000s",
//   "acquire op 3, :fail at op 5 at 1.100s", "acquire op 3, never completed".
std::string call_text(const LockCall& c) {
  if (c.complete_index < 0) {
    return fmt::format("{} op {}, never completed", to_string(c.f), c.invoke_index);
  }
  if (c.f == history::OpF::kAcquire && c.outcome == history::OpType::kOk) {
    return fmt::format("acquire op {}{}, invoked at op {}", c.complete_index, when(c),
                       c.invoke_index);
  }
  return fmt::format("{} op {}, :{} at op {}{}", to_string(c.f), c.invoke_index,
                     to_string(c.outcome), c.complete_index, when(c));
}

// Whether `process` invoked an acquire before op `before` that did not fail:
// in the owner-mutex model the only way it could come to hold the lock.
bool could_have_acquired(const std::vector<history::Op>& ops, int64_t process, int64_t before) {
  bool pending = false, could = false;
  for (const history::Op& op : ops) {
    if (op.index >= before) break;
    if (op.process != process || op.f != history::OpF::kAcquire) continue;
    if (op.type == history::OpType::kInvoke) {
      pending = true;
      continue;
    }
    could = could || (pending && op.type != history::OpType::kFail);
    pending = false;
  }
  return could || pending;
}

// Why the lock could not be in the state `z` needed, for the explanation.
// `own_acquire`: whether z's process had an acquire that could have granted
// it (what an owner-mutex release needs, whatever state the lock was in).
std::string conflict_text(const LockCall& z, const std::optional<LockCall>& from, MutexModel model,
                          bool own_acquire) {
  if (z.f == history::OpF::kAcquire) {
    LOCKSIM_ASSERT_MSG(from.has_value(), "an acquire can only be stuck behind a holder");
    const std::string assumed = from->outcome == history::OpType::kOk
                                    ? ""
                                    : "; its outcome is unknown, so it had to be assumed";
    return fmt::format(
        "{} acquired the lock ({}) while {} still held it ({}{}), and no release that could have "
        "freed it was invoked before op {}",
        call_actor(z), call_text(z), call_actor(*from), call_text(*from), assumed,
        z.complete_index);
  }
  // Naming who held it says more; a free lock is no reason when the releaser
  // could not have held it anyway.
  const bool someone_held = from.has_value() && from->f == history::OpF::kAcquire;
  if (model == MutexModel::kOwnerMutex && !own_acquire && !someone_held) {
    return fmt::format(
        "{} released the lock ({}) but never held it: it invoked no acquire that could have "
        "granted it before op {}, and in the owner-mutex model only the holder's release frees "
        "the lock",
        call_actor(z), call_text(z), z.complete_index);
  }
  if (!from.has_value()) {
    return fmt::format(
        "{} released the lock ({}) but nobody could have held it: no acquire was "
        "invoked before op {}",
        call_actor(z), call_text(z), z.complete_index);
  }
  if (from->f == history::OpF::kRelease) {
    return fmt::format(
        "{} released the lock ({}) but it was already free: {} had released it "
        "({}) and no acquire that could have taken it again was invoked before op "
        "{}",
        call_actor(z), call_text(z), call_actor(*from), call_text(*from), z.complete_index);
  }
  LOCKSIM_ASSERT(model == MutexModel::kOwnerMutex);
  return fmt::format(
      "{} released the lock ({}) but did not hold it: {} did ({}), and in the "
      "owner-mutex model only the holder's release frees the lock",
      call_actor(z), call_text(z), call_actor(*from), call_text(*from));
}

// `prefix_length`: how many of `ops` the shortest failing prefix holds, when
// invalid.
void explain(LinearizabilityVerdict& v, const std::vector<history::Op>& ops, size_t prefix_length) {
  const std::string name = v.model == MutexModel::kMutex ? "a mutex" : "an owner-mutex";
  if (v.kind == Verdict::Kind::kValid) {
    v.explanation = fmt::format(
        "The {} client ops linearize as {}: {} calls fit one legal order of acquires and "
        "releases ({} of unknown outcome, {} failed and ignored).",
        v.client_ops, name, v.calls, v.info_calls, v.fail_calls);
    if (v.client_ops == 0) v.explanation = "The history has no client ops: nothing to check.";
    return;
  }
  v.explanation = fmt::format(
      "Not linearizable as {}: {}. Ops up to op {} ({} client ops) are the shortest prefix of the "
      "history that cannot be linearized",
      name,
      conflict_text(
          *v.unlinearizable, v.state_from, v.model,
          could_have_acquired(ops, v.unlinearizable->process, v.unlinearizable->complete_index)),
      v.prefix_end_index, v.prefix_ops);
  const history::Op& last = ops[prefix_length - 1];
  if (last.index != v.unlinearizable->complete_index) {
    // A later :fail (or :ok) closed the last way out, e.g. an open call that
    // could have been the missing release until it failed.
    v.explanation += fmt::format(
        "; the last is process {}'s :{} :{}, which closed the last way "
        "out (while open, that call could still have taken effect)",
        last.process, to_string(last.type), to_string(last.f));
  }
  v.explanation += ".";
}

}  // namespace

const char* to_string(MutexModel m) {
  return m == MutexModel::kMutex ? "mutex" : "owner-mutex";
}

std::optional<MutexModel> mutex_model_from(std::string_view name) {
  if (name == "mutex") return MutexModel::kMutex;
  if (name == "owner-mutex") return MutexModel::kOwnerMutex;
  return std::nullopt;
}

std::string call_actor(const LockCall& call) {
  if (call.client < 0) return fmt::format("process {}", call.process);
  return fmt::format("{} (process {})", history::client_label(call.client), call.process);
}

std::optional<HistoryRuleBreak> find_rule_break(const std::vector<history::Op>& ops) {
  return pair_calls(ops, ops.size(), true).rule_break;
}

LinearizabilityVerdict check_linearizable(const std::vector<history::Op>& ops, MutexModel model) {
  Paired p = pair_calls(ops, ops.size());
  LOCKSIM_ASSERT_MSG(!p.rule_break.has_value(),
                     "check_linearizable needs a history that keeps Jepsen's rules "
                     "(find_rule_break first)");
  LinearizabilityVerdict v;
  size_t length = 0;
  v.model = model;
  v.checker = fmt::format("linearizability ({})", to_string(model));
  v.client_ops = p.client_ops;
  v.calls = p.calls_total;
  v.info_calls = p.info_calls;
  v.fail_calls = p.fail_calls;

  const GreedyResult g = Greedy(p.calls, model).run();
  if (g.linearizable) {
    v.kind = Verdict::Kind::kValid;
  } else {
    v.kind = Verdict::Kind::kInvalid;
    const size_t stuck_at = p.calls[g.stuck].complete_pos();
    // Given back before the search pairs prefixes: two sets of calls at once
    // were the peak of checking an invalid 1 M-op history.
    std::vector<Call>().swap(p.calls);
    length = shortest_failing_prefix(ops, model, stuck_at, ops.size());
    // The conflict as the shortest prefix itself shows it.
    const Paired q = pair_calls(ops, length);
    const GreedyResult h = Greedy(q.calls, model).run();
    LOCKSIM_ASSERT_MSG(!h.linearizable, "the shortest failing prefix cannot be linearized");
    const Call& z = q.calls[h.stuck];
    LOCKSIM_ASSERT_MSG(z.must() && z.complete_pos() < length, "only an :ok call can be stuck");
    v.unlinearizable = lock_call(ops, z);
    if (h.state_from != kNone) v.state_from = lock_call(ops, q.calls[h.state_from]);
    v.prefix_end_index = ops[length - 1].index;
    // The nemesis's ops in the prefix are not client ops: a run's history
    // has them, a checked file's reader has skipped them, and the two must
    // say the same count.
    v.prefix_ops = std::count_if(ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(length),
                                 history::is_client_op);
  }
  explain(v, ops, length);
  return v;
}

}  // namespace locksim::checkers
