#include "sim/mysql/lock_exposure.h"

#include "env/assert.h"
#include "env/datetime.h"
#include "sim/mysql/schema.h"

namespace locksim::sim::mysql {

LockExposure row_exposure(const Engine& engine, const std::string& lock_name, TimePoint correct_now,
                          TimePoint true_now) {
  const Row* row = engine.committed_row(lock_name);
  if (row == nullptr) return LockExposure{true};  // v1 inserts it; v2/v3 insert it free and take it
  static const size_t status = *column_index("Fstatus");
  static const size_t deadline = *column_index("Fdeadline");
  LOCKSIM_ASSERT(row->size() == table_columns().size());
  if ((*row)[status] != "1") return LockExposure{true};
  // Held until a correct clock reaches the deadline (only a write changes
  // the row or its status).
  const TimePoint end = parse_datetime((*row)[deadline]);
  if (end <= correct_now) return LockExposure{true};
  return LockExposure{false, true_now + (end - correct_now)};
}

}  // namespace locksim::sim::mysql
