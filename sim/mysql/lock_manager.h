// InnoDB's row locks as far as they decide a lock table's fate: record locks
// on the unique and primary keys, gap locks, insert-intention locks, the lock
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
//     that gap; is compatible with other insert intentions, and never blocks
//     anything itself.
// A transaction never conflicts with itself.
//
// The queue (MariaDB's lock_rec_other_has_conflicting and
// lock_rec_dequeue_from_page): per target, every request in arrival order,
// granted or waiting.
//   - A new request waits when it conflicts with *any* other transaction's
//     request in the queue, a waiting one included: a shared request queues
//     behind a waiting exclusive one, and a shared holder that asks for the
//     exclusive lock queues behind another transaction's waiting exclusive
//     request (and so deadlocks with it).
//   - When requests leave the queue (a release, a cancelled wait), every
//     waiting request that no longer conflicts with a request *ahead* of it
//     is granted at once, in queue order.
//   - A transaction waits for at most one request at a time, as an InnoDB
//     transaction has one wait_lock.
//
// Deadlocks: each waiting transaction waits for exactly one other (the first
// conflicting request in queue order, granted or waiting), as MariaDB 10.6+
// keeps one `wait_trx` per transaction; a cycle is found by walking that chain.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace locksim::sim::mysql {

using TrxId = uint64_t;

enum class LockKind { kRecordShared, kRecordExclusive, kGap, kInsertIntention };

// The two indexes locks are taken on: the primary key and uniq_Flock_name
// (ordered as their names "pk" < "uniq").
enum class LockIndex : uint8_t { kPk, kUniq };

// What a lock is on: a record of an index by key, or the gap before that key
// ("" key is the supremum: past the last record).
struct LockTarget {
  LockIndex index;
  std::string key;
  auto operator<=>(const LockTarget&) const = default;
};

class LockManager {
 public:
  // Grants the lock and returns nullopt when no other transaction's request
  // on the target (granted or waiting) conflicts, or when `trx` holds it (or
  // a stronger one) already. Otherwise queues the request as waiting and
  // returns the transaction to wait for: the first conflicting request's.
  // Asking again for the request `trx` waits for returns who it waits for
  // now without queueing it twice; asking for anything else first withdraws
  // that waiting request (the statement moved on).
  std::optional<TrxId> acquire(TrxId trx, const LockTarget& target, LockKind kind);

  // Withdraws the request `trx` waits for, if any (its statement finished,
  // timed out or gave up), and grants what that lets through. Returns
  // whether there was one.
  bool cancel_wait(TrxId trx);

  // Drops every request of `trx` (commit or rollback) and grants what that
  // lets through.
  void release_all(TrxId trx);

  // The record `removed` left its index (an insert rolled back, a delete
  // committed and purged): as InnoDB's lock_rec_inherit_to_gap, every request
  // on it but an insert intention, granted or waiting, becomes a granted gap
  // lock on `heir`, the next key of that index (the gap before `removed`
  // merges into the gap before `heir`). Waiting requests on `removed` are
  // withdrawn: their statements must search again.
  void inherit_to_gap(const LockTarget& removed, const LockTarget& heir);

  // Requests of `trx`, granted and waiting, for the deadlock victim's weight
  // (InnoDB counts the waiting lock struct too).
  size_t lock_count(TrxId trx) const;

  // The wait-for graph's edges: set when a transaction starts waiting, cleared
  // when it stops (granted, timed out, rolled back).
  void set_waiting(TrxId trx, TrxId for_trx) { waits_for_[trx] = for_trx; }
  void clear_waiting(TrxId trx) { waits_for_.erase(trx); }

  // The cycle through `trx` in the wait-for graph, starting with trx and
  // following the waits-for edges, or empty when there is none.
  std::vector<TrxId> cycle_through(TrxId trx) const;

 private:
  struct Request {
    TrxId trx;
    LockKind kind;
    bool waiting;
  };
  using Queue = std::vector<Request>;
  static bool conflicts(LockKind held, LockKind wanted);
  static bool covers(LockKind held, LockKind wanted);
  // The first request of another transaction in q[0, end) that `wanted` of
  // `trx` has to wait for, or nullopt.
  static std::optional<TrxId> first_conflict(const Queue& q, size_t end, TrxId trx,
                                             LockKind wanted);
  // Grants, in queue order, every waiting request nothing ahead of it blocks.
  void grant_waiting(Queue& q);
  void erase_if_empty(const LockTarget& target);
  using Queues = std::map<LockTarget, Queue>;
  // A target's queue is made when its first request comes and dropped when
  // its last goes: nearly every statement of a lock run does both. The map
  // nodes (key string and queue vector included) are kept for reuse instead
  // of freed and allocated again; which node serves which key never shows
  // (the map's order is by key).
  Queues::iterator make_queue(const LockTarget& target);
  Queues::iterator drop_queue(Queues::iterator it);  // returns the next
  static constexpr size_t kSpareQueuesMax = 16;      // memory kept, at most

  Queues queues_;
  std::vector<Queues::node_type> spare_;
  // The one request each waiting transaction waits for.
  std::map<TrxId, std::pair<LockTarget, LockKind>> waiting_on_;
  std::map<TrxId, TrxId> waits_for_;
};

}  // namespace locksim::sim::mysql
