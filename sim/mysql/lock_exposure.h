// The MySQL backend's answer to the exposure question: would a contender
// arriving now, with a correct clock, take the lock row at once?
//
// The article's acquire (algorithms/mysql_lock.h) treats a row as held while
// Fstatus = 1 AND Fdeadline > now (its own clock). So a fresh contender takes
// the lock when the row is missing, released (Fstatus 0), or its deadline has
// passed by true time. Kept in its own file, apart from the engine, so the
// replication work in sim/mysql/ and this question do not touch each other.
#pragma once

#include <string>

#include "env/time.h"
#include "sim/backend.h"
#include "sim/mysql/engine.h"

namespace locksim::sim::mysql {

// Reads only the latest committed row of `lock_name` (no locks, no
// statements counted). `correct_now` is a correct clock's reading at true
// time `true_now`, on the same scale as the client clocks that wrote
// Fdeadline (unix time); a held row stays held until the deadline.
// The row as a lock: absent (no row, or Fstatus 0), held by Fdesc (the
// holder's token) until its deadline, or expired. `server` and `serving` are
// the caller's to set.
ServerLockState row_lock_state(const Engine& engine, const std::string& lock_name,
                               TimePoint correct_now, TimePoint true_now);
// The same, written over `out`'s kind, holder and expires (its holder string
// keeps its room; `server` and `serving` are left as they are).
void fill_row_lock_state(const Engine& engine, const std::string& lock_name, TimePoint correct_now,
                         TimePoint true_now, ServerLockState& out);

LockExposure row_exposure(const Engine& engine, const std::string& lock_name, TimePoint correct_now,
                          TimePoint true_now);

}  // namespace locksim::sim::mysql
