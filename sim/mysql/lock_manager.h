// InnoDB's row locks as far as they decide a lock table's fate: record locks
// on the unique and primary keys, gap locks, insert-intention locks, the wait
// queue and deadlock detection on the wait-for graph.
//
// Pure bookkeeping: no time, no sessions; the engine (engine.h) asks and
// decides what waiting means.
//
// Lock kinds and their conflicts (InnoDB's lock_rec_has_to_wait):
//   - record S / X on a key: S-S compatible, everything else conflicts;
//   - gap (before a key, or before the supremum): never waits and never
//     blocks another gap lock, whatever its mode — a gap lock only keeps
//     *inserts* out of the gap;
//   - insert intention on a gap: waits for another transaction's gap lock on
//     that gap; is compatible with other insert intentions.
// A transaction never conflicts with itself.
//
// Deadlocks: each waiting transaction waits for exactly one other (the first
// holder of a conflicting lock, in grant order), as MariaDB 10.6+ keeps one
// `wait_trx` per transaction; a cycle is found by walking that chain.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace locksim::sim::mysql {

using TrxId = uint64_t;

enum class LockKind { kRecordShared, kRecordExclusive, kGap, kInsertIntention };

// What a lock is on: a record of an index ("uniq" or "pk") by key, or the gap
// before that key ("" key on "uniq" is the supremum: past the last record).
struct LockTarget {
  std::string index;
  std::string key;
  auto operator<=>(const LockTarget&) const = default;
};

class LockManager {
 public:
  // Grants the lock if no other transaction holds a conflicting one and
  // returns nullopt; else returns the transaction to wait for (the first
  // conflicting holder in grant order) and grants nothing. A lock the
  // transaction already holds (or a stronger one) is granted again silently.
  std::optional<TrxId> acquire(TrxId trx, const LockTarget& target, LockKind kind);

  // Drops every lock of `trx` (commit or rollback).
  void release_all(TrxId trx);

  // Number of locks `trx` holds, for the deadlock victim's weight.
  size_t lock_count(TrxId trx) const;

  // The wait-for graph's edges: set when a transaction starts waiting, cleared
  // when it stops (granted, timed out, rolled back).
  void set_waiting(TrxId trx, TrxId for_trx) { waits_for_[trx] = for_trx; }
  void clear_waiting(TrxId trx) { waits_for_.erase(trx); }

  // The cycle through `trx` in the wait-for graph, starting with trx and
  // following the waits-for edges, or empty when there is none.
  std::vector<TrxId> cycle_through(TrxId trx) const;

 private:
  struct Held {
    TrxId trx;
    LockKind kind;
  };
  static bool conflicts(LockKind held, LockKind wanted);
  static bool covers(LockKind held, LockKind wanted);

  // Per target, the granted locks in grant order.
  std::map<LockTarget, std::vector<Held>> granted_;
  std::map<TrxId, TrxId> waits_for_;
};

}  // namespace locksim::sim::mysql
