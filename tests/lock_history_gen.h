// Test helpers for the history checkers: random lock histories that keep
// Jepsen's rules, and a brute-force linearizability check that follows the
// definition literally (used as the reference for the greedy checker).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "checkers/linearizability.h"
#include "history/history.h"
#include "sim/rng.h"

namespace locksim::testing {

struct GenOptions {
  int processes_max = 4;  // concurrent client slots
  int events_max = 16;    // invocations and completions, nemesis ops not counted
  double ok = 0.6;        // completion odds; the rest split fail / info
  double fail = 0.2;
  double nemesis = 0.1;    // odds of a nemesis :info op at each step
  double follow_f = 0.75;  // odds a slot does the natural next f (acquire after release)
};

// A random history: each slot is a client running acquire/release calls one
// at a time; a slot whose call ends :info continues under a fresh process (as
// locksim's clients do); some calls are left open at the end.
inline std::vector<history::Op> random_lock_history(sim::Rng& rng, const GenOptions& g = {}) {
  using history::Op;
  using history::OpF;
  using history::OpType;
  const int slots = static_cast<int>(rng.between(1, g.processes_max));
  const int events = static_cast<int>(rng.between(1, g.events_max));
  struct Slot {
    int64_t process;
    bool open = false;
    history::OpF f = history::OpF::kAcquire;
    history::OpF next = history::OpF::kAcquire;
  };
  std::vector<Slot> s;
  for (int i = 0; i < slots; ++i) s.push_back(Slot{i});
  int64_t next_process = slots;
  std::vector<history::Op> ops;
  auto emit = [&](int64_t process, history::OpType type, history::OpF f, int client) {
    history::Op op;
    op.index = static_cast<int64_t>(ops.size());
    op.time_ns = op.index * 1000;
    op.process = process;
    op.type = type;
    op.f = f;
    op.client = client;
    ops.push_back(op);
  };
  for (int e = 0; e < events; ++e) {
    if (rng.chance(g.nemesis)) emit(history::kNemesisProcess, history::OpType::kInfo, history::OpF::kPause, -1);
    const int i = static_cast<int>(rng.below(static_cast<uint64_t>(slots)));
    Slot& slot = s[static_cast<size_t>(i)];
    if (!slot.open) {
      slot.f =
          rng.chance(g.follow_f) ? slot.next : (rng.chance(0.5) ? history::OpF::kAcquire : history::OpF::kRelease);
      slot.open = true;
      emit(slot.process, history::OpType::kInvoke, slot.f, i);
      continue;
    }
    const double u = static_cast<double>(rng.below(1'000'000)) / 1e6;
    const history::OpType t = u < g.ok ? history::OpType::kOk : (u < g.ok + g.fail ? history::OpType::kFail : history::OpType::kInfo);
    emit(slot.process, t, slot.f, i);
    slot.open = false;
    if (t == history::OpType::kOk) slot.next = slot.f == history::OpF::kAcquire ? history::OpF::kRelease : history::OpF::kAcquire;
    if (t == history::OpType::kInfo) {
      slot.process = next_process++;
      slot.next = history::OpF::kAcquire;
    }
  }
  return ops;
}

// Linearizability by the definition: is there a sequence of distinct calls,
// containing every :ok call, some unknown-outcome calls and no :fail call,
// in which no call comes before one that completed before it was invoked,
// and which the model accepts? Depth-first over (calls placed, model state),
// remembering dead states. Exponential: small histories only (< 20 calls).
class BruteForce {
 public:
  BruteForce(const std::vector<history::Op>& ops, checkers::MutexModel model) : model_(model) {
    std::map<int64_t, size_t> open;  // process -> call
    for (size_t pos = 0; pos < ops.size(); ++pos) {
      const history::Op& op = ops[pos];
      if (!history::is_client_op(op)) continue;
      if (op.type == history::OpType::kInvoke) {
        open[op.process] = calls_.size();
        calls_.push_back(Call{op.process, op.f, pos, kNever, false, false});
        continue;
      }
      Call& c = calls_[open.at(op.process)];
      open.erase(op.process);
      if (op.type == history::OpType::kFail) c.failed = true;
      if (op.type == history::OpType::kOk) {
        c.ok = true;
        c.complete = pos;
      }
    }
  }

  bool linearizable() { return search(0, kFree); }

 private:
  static constexpr size_t kNever = SIZE_MAX;
  static constexpr int64_t kFree = -1;  // model state: -1 free, else the holder (mutex: 0)
  struct Call {
    int64_t process;
    history::OpF f;
    size_t invoke;
    size_t complete;  // kNever unless :ok
    bool ok;
    bool failed;
  };

  bool done(uint32_t placed) const {
    for (size_t i = 0; i < calls_.size(); ++i) {
      if (calls_[i].ok && !(placed & (1u << i))) return false;
    }
    return true;
  }

  // May x come after every call in `placed`? Not if x completed before one
  // of them was invoked.
  bool may_follow(uint32_t placed, const Call& x) const {
    for (size_t i = 0; i < calls_.size(); ++i) {
      if ((placed & (1u << i)) && x.complete != kNever && x.complete < calls_[i].invoke) {
        return false;
      }
    }
    return true;
  }

  bool step(int64_t state, const Call& x, int64_t* next) const {
    const bool owner = model_ == checkers::MutexModel::kOwnerMutex;
    if (x.f == history::OpF::kAcquire) {
      if (state != kFree) return false;
      *next = owner ? x.process : 0;
      return true;
    }
    if (state == kFree || (owner && state != x.process)) return false;
    *next = kFree;
    return true;
  }

  bool search(uint32_t placed, int64_t state) {
    if (done(placed)) return true;
    if (dead_.count({placed, state})) return false;
    for (size_t i = 0; i < calls_.size(); ++i) {
      const Call& x = calls_[i];
      if (x.failed || (placed & (1u << i)) || !may_follow(placed, x)) continue;
      int64_t next = 0;
      if (step(state, x, &next) && search(placed | (1u << i), next)) return true;
    }
    dead_.insert({placed, state});
    return false;
  }

  checkers::MutexModel model_;
  std::vector<Call> calls_;
  std::set<std::pair<uint32_t, int64_t>> dead_;
};

}  // namespace locksim::testing
