// Generated lock histories for the benchmarks and the tests that need big
// ones: a contended lock as a lock service would record it, from one seed, so
// a 1 M-op history is made in a fraction of a second instead of being read
// from a checked-in file. Shared by bench/linearizability_bench.cpp,
// bench/check_bench.cpp and tests/big_history_test.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "history/history.h"
#include "sim/rng.h"

namespace locksim::bench {

using history::Op;
using history::OpF;
using history::OpType;

// A linearizable history of `ops` ops from `clients` clients contending for
// one lock, as a lock service would produce it: an acquire succeeds when the
// lock is free at its completion, fails otherwise; a fraction `info` of the
// completions are :info, after which the client continues under a fresh process (an :info release
// frees the lock, an :info acquire never took it). `violate` appends one acquire that succeeds
// while the lock is held, so the history is invalid at its end.
inline std::vector<Op> contended_history(int64_t ops, int clients, double info, bool violate) {
  locksim::sim::Rng rng(20240917);
  struct Client {
    int64_t process;
    bool pending = false;
    OpF f = OpF::kAcquire;
    bool holding = false;
  };
  std::vector<Client> c;
  for (int i = 0; i < clients; ++i) c.push_back(Client{i});
  int64_t next_process = clients;
  int holder = -1;
  std::vector<Op> h;
  h.reserve(static_cast<size_t>(ops) + 2);
  auto emit = [&](int i, OpType t, OpF f) {
    Op op;
    op.index = static_cast<int64_t>(h.size());
    op.time_ns = op.index * 1000;
    op.process = c[static_cast<size_t>(i)].process;
    op.client = i;
    op.type = t;
    op.f = f;
    h.push_back(op);
  };
  auto step = [&] {
    const int i = static_cast<int>(rng.below(static_cast<uint64_t>(clients)));
    Client& x = c[static_cast<size_t>(i)];
    if (!x.pending) {
      x.f = x.holding ? OpF::kRelease : OpF::kAcquire;
      x.pending = true;
      emit(i, OpType::kInvoke, x.f);
      return;
    }
    x.pending = false;
    const bool unknown = rng.chance(info);
    if (x.f == OpF::kRelease) {
      // Released, or (:info) the lease was given up: free from here on.
      holder = -1;
      x.holding = false;
      emit(i, unknown ? OpType::kInfo : OpType::kOk, OpF::kRelease);
    } else {
      // An :info acquire here never took effect (a timed-out request the
      // store refused); the checker must find it may be left out.
      const bool won = holder < 0 && !unknown;
      if (won) {
        holder = i;
        x.holding = true;
      }
      emit(i, unknown ? OpType::kInfo : (won ? OpType::kOk : OpType::kFail), OpF::kAcquire);
    }
    if (unknown) x.process = next_process++;
  };
  while (static_cast<int64_t>(h.size()) < ops) step();
  // The violation: a second acquire succeeds while the holder has not even
  // invoked its release.
  while (violate && (holder < 0 || c[static_cast<size_t>(holder)].pending)) step();
  if (violate) {
    const int other = (holder + 1) % clients;
    c[static_cast<size_t>(other)].process = next_process++;
    emit(other, OpType::kInvoke, OpF::kAcquire);
    emit(other, OpType::kOk, OpF::kAcquire);
  }
  return h;
}

// `ops` with a nemesis op (:pause, then :resume, of "c1") after every
// `every` ops, reindexed densely, as a run with faults records them: the
// readers must skip them. Time stays non-decreasing (a nemesis op takes the
// time of the op before it).
inline std::vector<Op> with_nemesis(const std::vector<Op>& ops, size_t every) {
  std::vector<Op> out;
  out.reserve(ops.size() + ops.size() / every + 1);
  bool paused = false;
  for (size_t i = 0; i < ops.size(); ++i) {
    out.push_back(ops[i]);
    if ((i + 1) % every != 0) continue;
    Op n = history::nemesis_op(
        paused ? "resume" : "pause",
        paused ? std::vector<std::string>{"c1"} : std::vector<std::string>{"c1", "1s"}, "");
    n.time_ns = ops[i].time_ns;
    out.push_back(std::move(n));
    paused = !paused;
  }
  for (size_t i = 0; i < out.size(); ++i) out[i].index = static_cast<int64_t>(i);
  return out;
}

}  // namespace locksim::bench
