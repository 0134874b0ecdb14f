// Statements that scan an index rather than look one row up (SqlAccess
// kPkRange, kUniqueRange, kFullScan): what they lock and which rows they
// read. InnoDB locks as it scans, record by record in index order, so the
// lock that makes a scan wait is the first locked record another
// transaction holds; the scan is run again from the start once it is free
// (engine.cpp), finding the locks it took before already its own.
#include "env/assert.h"
#include "sim/mysql/engine.h"
#include "sim/mysql/row_match.h"

namespace locksim::sim::mysql {

std::vector<std::pair<std::string, int64_t>> Engine::scanned_index(const SqlStatement& st) const {
  std::vector<std::pair<std::string, int64_t>> records;
  if (st.access == SqlAccess::kUniqueRange) {
    // unique_ holds a delete-marked record too until its deleter commits:
    // InnoDB scans and locks it as well.
    for (const auto& [key, fi] : unique_) records.emplace_back(key, fi);
  } else {
    LOCKSIM_ASSERT(st.access == SqlAccess::kPkRange || st.access == SqlAccess::kFullScan);
    for (const auto& [fi, l] : latest_) records.emplace_back(pk_key(fi), fi);
  }
  return records;
}

std::optional<TrxId> Engine::lock_scan(Session& s, const SqlStatement& st,
                                       const std::vector<SqlValue>& params, LockKind kind,
                                       std::vector<int64_t>* matched) {
  matched->clear();
  const bool on_unique = st.access == SqlAccess::kUniqueRange;
  const LockIndex index = on_unique ? LockIndex::kUniq : LockIndex::kPk;
  const size_t col = on_unique ? kFlockName : kFindex;
  // READ COMMITTED locks no gaps and keeps no lock on a row that does not
  // match (InnoDB releases it at once), so it locks only the matches.
  const bool gaps = isolation_ == Isolation::kRepeatableRead;
  for (const auto& [key, fi] : scanned_index(st)) {
    const Latest& l = latest_.at(fi);
    const RangePlace place = st.access == SqlAccess::kFullScan
                                 ? RangePlace::kWithin
                                 : range_place(col, l.row[col], st.where, params);
    if (place == RangePlace::kBefore) continue;  // the scan starts past these
    const bool match =
        place == RangePlace::kWithin && !l.deleted && row_matches(l.row, st.where, params);
    if (gaps || match) {
      // A next-key lock: the gap before the record (never waits), then the
      // record; and the primary-key record of a unique-index entry.
      if (gaps) acquire_granted(s.trx, LockTarget{index, key}, LockKind::kGap);
      if (auto w = locks_.acquire(s.trx, LockTarget{index, key}, kind)) return w;
      if (on_unique) {
        if (auto w = locks_.acquire(s.trx, pk_target(fi), kind)) return w;
      }
    }
    // The first record past the range is locked like the others and ends
    // the scan: the gap up to it is what keeps inserts out of the range.
    if (place == RangePlace::kPast) return std::nullopt;
    if (match) matched->push_back(fi);
  }
  // Off the end of the index: the gap before the supremum.
  if (gaps) acquire_granted(s.trx, LockTarget{index, ""}, LockKind::kGap);
  return std::nullopt;
}

std::vector<const Row*> Engine::snapshot_scan(const Session& s, const SqlStatement& st,
                                              const std::vector<SqlValue>& params) const {
  std::vector<const Row*> rows;
  auto consider = [&](int64_t fi) {
    const Row* row = snapshot_row(s, fi);
    if (row && row_matches(*row, st.where, params)) rows.push_back(row);
  };
  if (st.access == SqlAccess::kUniqueRange) {
    // Every row ever written, in the unique index's order; names never
    // change, so a row's key is its name's.
    for (const auto& [key, findexes] : keyed_) {
      for (int64_t fi : findexes) consider(fi);
    }
  } else {
    for (const auto& [fi, key] : key_of_) consider(fi);  // primary-key order
  }
  return rows;
}

}  // namespace locksim::sim::mysql
