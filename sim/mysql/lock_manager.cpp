#include "sim/mysql/lock_manager.h"

#include <algorithm>

#include "env/assert.h"

namespace locksim::sim::mysql {

bool LockManager::conflicts(LockKind held, LockKind wanted) {
  switch (wanted) {
    case LockKind::kGap:
      return false;  // gap locks only ever keep inserts out
    case LockKind::kInsertIntention:
      return held == LockKind::kGap;
    case LockKind::kRecordShared:
      return held == LockKind::kRecordExclusive;
    case LockKind::kRecordExclusive:
      return held == LockKind::kRecordShared || held == LockKind::kRecordExclusive;
  }
  return true;
}

bool LockManager::covers(LockKind held, LockKind wanted) {
  if (held == wanted) return true;
  return held == LockKind::kRecordExclusive && wanted == LockKind::kRecordShared;
}

std::optional<TrxId> LockManager::first_conflict(const Queue& q, size_t end, TrxId trx,
                                                 LockKind wanted) {
  LOCKSIM_ASSERT(end <= q.size());
  for (size_t i = 0; i < end; ++i) {
    if (q[i].trx != trx && conflicts(q[i].kind, wanted)) return q[i].trx;
  }
  return std::nullopt;
}

void LockManager::grant_waiting(Queue& q) {
  for (size_t i = 0; i < q.size(); ++i) {
    if (!q[i].waiting || first_conflict(q, i, q[i].trx, q[i].kind)) continue;
    q[i].waiting = false;
    const size_t erased = waiting_on_.erase(q[i].trx);
    LOCKSIM_ASSERT_MSG(erased == 1, "a waiting request is its transaction's one wait");
  }
}

void LockManager::erase_if_empty(const LockTarget& target) {
  auto it = queues_.find(target);
  if (it != queues_.end() && it->second.empty()) drop_queue(it);
}

LockManager::Queues::iterator LockManager::make_queue(const LockTarget& target) {
  if (spare_.empty()) return queues_.emplace(target, Queue{}).first;
  Queues::node_type node = std::move(spare_.back());
  spare_.pop_back();
  LOCKSIM_ASSERT_MSG(node.mapped().empty(), "a spare queue is kept empty");
  node.key() = target;
  const auto inserted = queues_.insert(std::move(node));
  LOCKSIM_ASSERT_MSG(inserted.inserted, "a queue is made only for a target without one");
  return inserted.position;
}

LockManager::Queues::iterator LockManager::drop_queue(Queues::iterator it) {
  LOCKSIM_ASSERT(it->second.empty());
  const auto next = std::next(it);
  Queues::node_type node = queues_.extract(it);
  if (spare_.size() < kSpareQueuesMax) spare_.push_back(std::move(node));
  return next;
}

std::optional<TrxId> LockManager::acquire(TrxId trx, const LockTarget& target, LockKind kind) {
  LOCKSIM_ASSERT(trx != 0);
  auto it = queues_.find(target);
  const auto w = waiting_on_.find(trx);
  if (w != waiting_on_.end() && w->second.first == target && w->second.second == kind) {
    // Asked again by the re-run of the statement that waits for it: still
    // waiting, since releases grant what they let through. It waits for the
    // first conflicting request ahead of its own (first_conflict). It holds
    // no granted request here that covers this one: it would not have
    // queued this one, and it gains granted requests only by asking for
    // them (which withdraws this wait) or as gaps (which cover no record
    // lock). So the "held already" answer below never applies: checked for
    // its requests ahead of the waiting one, which the walk passes anyway.
    LOCKSIM_ASSERT_MSG(it != queues_.end(), "a transaction's waiting request is in its queue");
    for (const Request& r : it->second) {
      if (r.trx == trx) {
        if (r.waiting) break;
        LOCKSIM_ASSERT_MSG(kind == LockKind::kInsertIntention || !covers(r.kind, kind),
                           "a transaction waits for a lock it holds");
      } else if (conflicts(r.kind, kind)) {
        return r.trx;
      }
    }
    LOCKSIM_ASSERT_MSG(false, "a waiting request has a conflicting request ahead of it");
    return std::nullopt;
  }
  bool held = false;
  if (it != queues_.end()) {
    held = std::any_of(it->second.begin(), it->second.end(), [&](const Request& r) {
      return r.trx == trx && !r.waiting && covers(r.kind, kind);
    });
  }
  // Held already: a re-run taking its locks again from the start must not
  // withdraw the request it waits for further on. Except an insert
  // intention: every insert checks the gap afresh (InnoDB keeps no granted
  // insert-intention lock: it checks for others' gap locks at each insert).
  if (held && kind != LockKind::kInsertIntention) return std::nullopt;
  if (w != waiting_on_.end()) {
    // Asking for anything else withdraws the request it waited for.
    cancel_wait(trx);
    it = queues_.find(target);  // the cancelled request's queue may have been this one
  }
  if (it == queues_.end()) it = make_queue(target);
  Queue& q = it->second;
  // Waiting requests count too: they are ahead of this one in the queue.
  const std::optional<TrxId> blocker = first_conflict(q, q.size(), trx, kind);
  if (!blocker && held) return std::nullopt;  // an insert intention granted before
  q.push_back(Request{trx, kind, blocker.has_value()});
  if (blocker) waiting_on_[trx] = {target, kind};
  return blocker;
}

bool LockManager::cancel_wait(TrxId trx) {
  auto w = waiting_on_.find(trx);
  if (w == waiting_on_.end()) return false;
  const LockTarget target = w->second.first;
  waiting_on_.erase(w);
  Queue& q = queues_.at(target);
  q.erase(std::remove_if(q.begin(), q.end(),
                         [trx](const Request& r) { return r.trx == trx && r.waiting; }),
          q.end());
  grant_waiting(q);
  erase_if_empty(target);
  return true;
}

void LockManager::release_all(TrxId trx) {
  waiting_on_.erase(trx);
  for (auto it = queues_.begin(); it != queues_.end();) {
    Queue& q = it->second;
    const size_t before = q.size();
    q.erase(std::remove_if(q.begin(), q.end(), [trx](const Request& r) { return r.trx == trx; }),
            q.end());
    if (q.size() != before) grant_waiting(q);
    it = q.empty() ? drop_queue(it) : std::next(it);
  }
  waits_for_.erase(trx);
}

void LockManager::inherit_to_gap(const LockTarget& removed, const LockTarget& heir) {
  LOCKSIM_ASSERT(removed.index == heir.index && removed != heir);
  auto it = queues_.find(removed);
  if (it == queues_.end()) return;
  const Queue donor = std::move(it->second);
  queues_.erase(it);
  Queue& q = queues_[heir];
  for (const Request& r : donor) {
    if (r.waiting) waiting_on_.erase(r.trx);  // withdrawn: the record it waited for is gone
    if (r.kind == LockKind::kInsertIntention) continue;
    const bool has_gap = std::any_of(q.begin(), q.end(), [&](const Request& h) {
      return h.trx == r.trx && h.kind == LockKind::kGap;
    });
    if (!has_gap) q.push_back(Request{r.trx, LockKind::kGap, false});  // gaps never wait
  }
  erase_if_empty(heir);
}

size_t LockManager::lock_count(TrxId trx) const {
  size_t n = 0;
  for (const auto& [target, q] : queues_) {
    n += static_cast<size_t>(
        std::count_if(q.begin(), q.end(), [trx](const Request& r) { return r.trx == trx; }));
  }
  return n;
}

std::vector<TrxId> LockManager::cycle_through(TrxId trx) const {
  TrxId at = trx;
  // Each transaction waits for at most one other, so the walk either ends,
  // returns to trx (a cycle through it) or enters a cycle not through trx;
  // the length bound catches the last case. Most waits close no cycle: the
  // path is written down only once one is found.
  bool cycle = false;
  for (size_t steps = 0; steps <= waits_for_.size() && !cycle; ++steps) {
    auto it = waits_for_.find(at);
    if (it == waits_for_.end()) return {};
    at = it->second;
    cycle = at == trx;
  }
  if (!cycle) return {};
  std::vector<TrxId> path{trx};
  for (at = waits_for_.at(trx); at != trx; at = waits_for_.at(at)) path.push_back(at);
  return path;
}

}  // namespace locksim::sim::mysql
