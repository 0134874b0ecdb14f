#include "sim/mysql/lock_exposure.h"

#include "env/assert.h"
#include "env/datetime.h"
#include "sim/mysql/schema.h"

namespace locksim::sim::mysql {

namespace {

// The row as a lock without copying its holder: the exposure monitor asks
// after every event of a hold.
struct RowLock {
  ServerLockState::Kind kind = ServerLockState::Kind::kAbsent;
  const std::string* holder = nullptr;  // Fdesc; kHeld and kExpired
  TimePoint expires = LockExposure::kNoChange;
};

RowLock see_row(const Engine& engine, const std::string& lock_name, TimePoint correct_now,
                TimePoint true_now) {
  RowLock out;
  const Row* row = engine.committed_row(lock_name);
  if (row == nullptr) return out;  // v1 inserts it; v2/v3 insert it free and take it
  static const size_t status = *column_index("Fstatus");
  static const size_t deadline = *column_index("Fdeadline");
  static const size_t desc = *column_index("Fdesc");
  LOCKSIM_ASSERT(row->size() == table_columns().size());
  if ((*row)[status] != "1") return out;  // released
  out.holder = &(*row)[desc];
  // Held until a correct clock reaches the deadline (only a write changes
  // the row or its status).
  const TimePoint end = parse_datetime((*row)[deadline]);
  out.kind = ServerLockState::Kind::kExpired;
  if (end <= correct_now) return out;
  out.kind = ServerLockState::Kind::kHeld;
  out.expires = true_now + (end - correct_now);
  return out;
}

}  // namespace

void fill_row_lock_state(const Engine& engine, const std::string& lock_name, TimePoint correct_now,
                         TimePoint true_now, ServerLockState& out) {
  const RowLock seen = see_row(engine, lock_name, correct_now, true_now);
  out.kind = seen.kind;
  if (seen.holder != nullptr) {
    out.holder = *seen.holder;
  } else {
    out.holder.clear();
  }
  out.expires = seen.expires;
}

ServerLockState row_lock_state(const Engine& engine, const std::string& lock_name,
                               TimePoint correct_now, TimePoint true_now) {
  ServerLockState out;
  fill_row_lock_state(engine, lock_name, correct_now, true_now, out);
  return out;
}

LockExposure row_exposure(const Engine& engine, const std::string& lock_name, TimePoint correct_now,
                          TimePoint true_now) {
  const RowLock s = see_row(engine, lock_name, correct_now, true_now);
  if (s.kind != ServerLockState::Kind::kHeld) return LockExposure{true};
  return LockExposure{false, s.expires};
}

}  // namespace locksim::sim::mysql
