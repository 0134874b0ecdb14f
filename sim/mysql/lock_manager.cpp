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

std::optional<TrxId> LockManager::acquire(TrxId trx, const LockTarget& target, LockKind kind) {
  LOCKSIM_ASSERT(trx != 0);
  std::vector<Held>& held = granted_[target];
  for (const Held& h : held) {
    if (h.trx != trx && conflicts(h.kind, kind)) return h.trx;
  }
  const bool already = std::any_of(held.begin(), held.end(), [&](const Held& h) {
    return h.trx == trx && covers(h.kind, kind);
  });
  if (!already) held.push_back(Held{trx, kind});
  return std::nullopt;
}

void LockManager::release_all(TrxId trx) {
  for (auto it = granted_.begin(); it != granted_.end();) {
    auto& v = it->second;
    v.erase(std::remove_if(v.begin(), v.end(), [trx](const Held& h) { return h.trx == trx; }),
            v.end());
    it = v.empty() ? granted_.erase(it) : std::next(it);
  }
  waits_for_.erase(trx);
}

size_t LockManager::lock_count(TrxId trx) const {
  size_t n = 0;
  for (const auto& [target, v] : granted_) {
    n += static_cast<size_t>(
        std::count_if(v.begin(), v.end(), [trx](const Held& h) { return h.trx == trx; }));
  }
  return n;
}

std::vector<TrxId> LockManager::cycle_through(TrxId trx) const {
  std::vector<TrxId> path{trx};
  TrxId at = trx;
  // Each transaction waits for at most one other, so the walk either ends,
  // returns to trx (a cycle through it) or enters a cycle not through trx;
  // the length bound catches the last case.
  for (size_t steps = 0; steps <= waits_for_.size(); ++steps) {
    auto it = waits_for_.find(at);
    if (it == waits_for_.end()) return {};
    at = it->second;
    if (at == trx) return path;
    path.push_back(at);
  }
  return {};
}

}  // namespace locksim::sim::mysql
