// The statement bodies of the engine: what SELECT, INSERT, UPDATE and DELETE
// read, lock and write. Each body takes every lock it needs before it writes
// anything, so a body that has to wait has changed nothing and can simply be
// run again from the start once the lock is free (engine.cpp does).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string_view>
#include <variant>

#include "env/argv_pool.h"
#include "env/assert.h"
#include "sim/mysql/engine.h"
#include "sim/mysql/row_match.h"

namespace locksim::sim::mysql {

namespace {

// unique_key_of(name) for a lookup, without building it when `name` is a key
// already (no capital letter, no trailing space: the usual case); else it is
// built in `scratch`.
const std::string& lookup_key(const std::string& name, std::string& scratch) {
  const bool is_key =
      (name.empty() || name.back() != ' ') &&
      std::none_of(name.begin(), name.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
  if (is_key) return name;
  scratch = unique_key_of(name);
  return scratch;
}

}  // namespace

void Engine::write_pk_key(int64_t findex, std::string& key) {
  if (findex < 0) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%020lld", static_cast<long long>(findex));
    key.assign(buf);
    return;
  }
  // printf's "%020lld" for a key that is not negative, without printf: a
  // lock key is built for nearly every row a statement locks.
  key.assign(20, '0');
  for (size_t i = key.size(); findex != 0 && i > 0; findex /= 10) {
    key[--i] = static_cast<char>('0' + findex % 10);
  }
}

std::string Engine::pk_key(int64_t findex) {
  std::string key;
  write_pk_key(findex, key);
  return key;
}

const LockTarget& Engine::pk_target(int64_t findex) {
  pk_target_.index = LockIndex::kPk;
  write_pk_key(findex, pk_target_.key);
  return pk_target_;
}

std::optional<int64_t> Engine::find_latest(const SqlCondition& key,
                                           const std::vector<SqlValue>& params) const {
  const SqlValue& v = bound(key.value, params);
  if (!v) return std::nullopt;
  if (key.column == kFindex) {
    std::optional<int64_t> fi = findex_of(v);
    if (fi && latest_.count(*fi)) return fi;
    return std::nullopt;
  }
  std::string scratch;
  auto it = unique_hashed_.find(lookup_key(*v, scratch));
  if (it == unique_hashed_.end()) return std::nullopt;
  return it->second;
}

const Row* Engine::snapshot_row(const Session& s, int64_t findex) const {
  if (std::find(s.written.begin(), s.written.end(), findex) != s.written.end()) {
    auto it = latest_.find(findex);
    if (it != latest_.end() && it->second.writer == s.trx) {
      if (it->second.deleted) return nullptr;
      return &it->second.row;
    }
  }
  auto h = history_.find(findex);
  if (h == history_.end()) return nullptr;
  LOCKSIM_ASSERT(s.read_view.has_value());
  // The newest version the snapshot sees; versions are in commit order, and
  // a busy row has thousands, so search from the newest end.
  const std::vector<Version>& versions = h->second;
  for (auto v = versions.rbegin(); v != versions.rend(); ++v) {
    if (v->commit_seq <= *s.read_view) return v->row ? &*v->row : nullptr;
  }
  return nullptr;
}

std::optional<int64_t> Engine::find_snapshot(const Session& s, const SqlCondition& key,
                                             const std::vector<SqlValue>& params) const {
  // Candidates: every row ever written under that key (names never change),
  // or the one Findex named; ascending Findex, as a scan would find them.
  const SqlValue& v = bound(key.value, params);
  if (!v) return std::nullopt;
  // The row's snapshot version satisfies the key's condition (row_matches
  // with `key` alone).
  auto sees = [&](int64_t fi) {
    const Row* row = snapshot_row(s, fi);
    return row != nullptr && column_satisfies(key.column, (*row)[key.column], key.op, v);
  };
  if (key.column == kFindex) {
    if (std::optional<int64_t> fi = findex_of(v); fi && sees(*fi)) return fi;
    return std::nullopt;
  }
  std::string scratch;
  auto it = keyed_.find(lookup_key(*v, scratch));
  if (it == keyed_.end()) return std::nullopt;
  for (int64_t fi : it->second) {
    if (sees(fi)) return fi;
  }
  return std::nullopt;
}

std::string Engine::next_key_after(const std::string& unique_key) const {
  auto it = unique_.upper_bound(unique_key);
  return it == unique_.end() ? std::string() : it->first;  // "" is the supremum
}

void Engine::acquire_granted(TrxId trx, const LockTarget& target, LockKind kind) {
  const std::optional<TrxId> wait = locks_.acquire(trx, target, kind);
  LOCKSIM_ASSERT_MSG(!wait, "a lock that never waits was granted");
}

std::optional<TrxId> Engine::lock_key(Session& s, const SqlCondition& key,
                                      const std::vector<SqlValue>& params, LockKind kind,
                                      std::optional<int64_t>* findex) {
  findex->reset();
  const bool by_pk = key.column == kFindex;
  std::optional<int64_t> fi = find_latest(key, params);
  if (!fi) {
    // READ COMMITTED locks no gaps: nothing found, nothing locked, so an
    // insert of that very key by anyone goes ahead.
    if (isolation_ == Isolation::kReadCommitted) return std::nullopt;
    // No such row: lock the gap it would go into, so no one can insert it.
    std::string next;
    if (by_pk) {
      const std::optional<int64_t> wanted = findex_of(bound(key.value, params));
      auto it = wanted ? latest_.upper_bound(*wanted) : latest_.end();
      next = it == latest_.end() ? std::string() : pk_key(it->first);
    } else if (const SqlValue& v = bound(key.value, params)) {
      next = next_key_after(unique_key_of(*v));
    }
    return locks_.acquire(s.trx, LockTarget{by_pk ? LockIndex::kPk : LockIndex::kUniq, next},
                          LockKind::kGap);
  }
  const Latest& l = latest_.at(*fi);
  if (!by_pk) {
    // MariaDB 10.11 takes a next-key lock here, not the record alone (the
    // differential test shows it): the gap before the row too. The gap part
    // is held from the request on, also while the record part waits, since
    // InnoDB makes an insert into that gap wait for a queued request as well
    // (the deadlock of v2's first acquire of a name that sorts before
    // 'center_lock'). A gap lock never waits, so this cannot block.
    // READ COMMITTED takes the record alone.
    const LockTarget entry{LockIndex::kUniq, unique_key_of(l.row[kFlockName])};
    if (isolation_ == Isolation::kRepeatableRead) acquire_granted(s.trx, entry, LockKind::kGap);
    if (auto w = locks_.acquire(s.trx, entry, kind)) return w;
  }
  if (auto w = locks_.acquire(s.trx, pk_target(*fi), kind)) return w;
  if (!latest_.at(*fi).deleted) *findex = fi;
  return std::nullopt;
}

std::optional<TrxId> Engine::lock_rows(Session& s, const SqlStatement& st,
                                       const std::vector<SqlValue>& params, LockKind kind,
                                       std::vector<int64_t>* rows) {
  rows->clear();
  if (st.access != SqlAccess::kPkLookup && st.access != SqlAccess::kUniqueLookup) {
    return lock_scan(s, st, params, kind, rows);
  }
  std::optional<int64_t> fi;
  if (auto w = lock_key(s, st.where[st.key], params, kind, &fi)) return w;
  if (fi && row_matches(latest_.at(*fi).row, st.where, params)) rows->push_back(*fi);
  return std::nullopt;
}

namespace {

// A SELECT's result with its column names and `rows` rows to project into,
// in vectors from the thread's pool (SqlResult gives them back when it dies).
SqlResult select_result(const SqlStatement& st, size_t rows) {
  SqlResult r;
  r.columns = argv_pool::take<std::string>(st.columns.size());
  for (size_t i = 0; i < st.columns.size(); ++i) argv_pool::overwrite(r.columns[i], st.columns[i]);
  r.rows = argv_pool::take<SqlRow>(rows);
  // Pair of take(): one row to project into per row found.
  LOCKSIM_ASSERT(r.rows.size() == rows && r.columns.size() == st.columns.size());
  return r;
}

}  // namespace

Engine::Outcome Engine::do_select(Session& s, const SqlStatement& st,
                                  const std::vector<SqlValue>& params) {
  if (st.lock == SqlLockMode::kNone) {
    // REPEATABLE READ: the snapshot starts at the transaction's first read;
    // READ COMMITTED: each read takes a new one.
    if (!s.read_view || isolation_ == Isolation::kReadCommitted) s.read_view = commit_seq_;
    if (st.access != SqlAccess::kPkLookup && st.access != SqlAccess::kUniqueLookup) {
      const std::vector<const Row*> rows = snapshot_scan(s, st, params);
      SqlResult r = select_result(st, rows.size());
      for (size_t i = 0; i < rows.size(); ++i) project_into(*rows[i], st.column_ids, r.rows[i]);
      return Outcome{std::nullopt, std::move(r)};
    }
    const Row* row = nullptr;
    if (std::optional<int64_t> fi = find_snapshot(s, st.where[st.key], params)) {
      row = snapshot_row(s, *fi);
      if (row && !row_matches(*row, st.where, params)) row = nullptr;
    }
    SqlResult r = select_result(st, row ? 1 : 0);
    if (row) project_into(*row, st.column_ids, r.rows[0]);
    return Outcome{std::nullopt, std::move(r)};
  }
  const LockKind kind =
      st.lock == SqlLockMode::kUpdate ? LockKind::kRecordExclusive : LockKind::kRecordShared;
  std::vector<int64_t>& rows = matched_;
  if (auto w = lock_rows(s, st, params, kind, &rows)) return Outcome{w, {}};
  SqlResult r = select_result(st, rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    project_into(latest_.at(rows[i]).row, st.column_ids, r.rows[i]);
  }
  return Outcome{std::nullopt, std::move(r)};
}

Engine::Outcome Engine::do_insert(Session& s, const SqlStatement& st,
                                  const std::vector<SqlValue>& params) {
  Row row = default_row();
  bool explicit_findex = false;
  uint32_t notes = 0;
  for (size_t i = 0; i < st.column_ids.size(); ++i) {
    const size_t col = st.column_ids[i];
    auto stored = store_value(col, bound(st.values[i], params), &notes);
    if (auto* err = std::get_if<SqlResult>(&stored)) return Outcome{std::nullopt, *err};
    row[col] = std::move(std::get<std::string>(stored));
    explicit_findex |= col == kFindex && row[col] != "0";
  }
  // InnoDB hands out the AUTO_INCREMENT value when the row is written, before
  // its duplicate check and lock waits (innodb_autoinc_lock_mode=1), once per
  // statement: an INSERT that then fails (1062, 1205, 1213) burns it, as the
  // differential test shows on MariaDB. A re-run after a wait keeps it.
  if (!explicit_findex && s.statement_autoinc == 0) s.statement_autoinc = auto_increment_++;
  const std::string uk = unique_key_of(row[kFlockName]);
  if (auto it = unique_hashed_.find(uk); it != unique_hashed_.end()) {
    // The duplicate check reads the latest row under a shared lock; it waits
    // for an uncommitted insert or update of that row to end.
    if (auto w = locks_.acquire(s.trx, LockTarget{LockIndex::kUniq, uk}, LockKind::kRecordShared)) {
      return Outcome{w, {}};
    }
    const Latest& l = latest_.at(it->second);
    if (!l.deleted) {
      return Outcome{std::nullopt,
                     SqlResult::error(sql_errno::kDupEntry, "Duplicate entry '" + row[kFlockName] +
                                                                "' for key 'uniq_Flock_name'")};
    }
  }
  if (auto w = locks_.acquire(s.trx, LockTarget{LockIndex::kUniq, next_key_after(uk)},
                              LockKind::kInsertIntention)) {
    return Outcome{w, {}};
  }
  const int64_t fi = explicit_findex ? std::stoll(row[kFindex]) : s.statement_autoinc;
  LOCKSIM_ASSERT(fi > 0);
  if (explicit_findex && latest_.count(fi)) {
    return Outcome{std::nullopt,
                   SqlResult::error(sql_errno::kDupEntry,
                                    "Duplicate entry '" + row[kFindex] + "' for key 'PRIMARY'")};
  }
  // The clustered record goes into the primary key's gap before the next
  // Findex (the supremum for a new AUTO_INCREMENT value): a scan's next-key
  // or supremum gap lock keeps it out.
  const auto next_pk = latest_.upper_bound(fi);
  if (auto w = locks_.acquire(
          s.trx,
          LockTarget{LockIndex::kPk,
                     next_pk == latest_.end() ? std::string() : pk_key(next_pk->first)},
          LockKind::kInsertIntention)) {
    return Outcome{w, {}};
  }
  auto_increment_ = std::max(auto_increment_, fi + 1);  // never given back, even on rollback
  row[kFindex] = std::to_string(fi);
  // The new row is the inserter's until it commits: X on both keys.
  acquire_granted(s.trx, LockTarget{LockIndex::kUniq, uk}, LockKind::kRecordExclusive);
  acquire_granted(s.trx, LockTarget{LockIndex::kPk, pk_key(fi)}, LockKind::kRecordExclusive);
  write_row(s, fi, std::move(row), false);
  SqlResult r;
  r.affected_rows = 1;
  r.last_insert_id = explicit_findex ? 0 : static_cast<uint64_t>(fi);
  r.warnings = notes;
  return Outcome{std::nullopt, std::move(r)};
}

Engine::Outcome Engine::do_update(Session& s, const SqlStatement& st,
                                  const std::vector<SqlValue>& params, bool is_delete) {
  std::vector<int64_t>& rows = matched_;
  if (auto w = lock_rows(s, st, params, LockKind::kRecordExclusive, &rows)) return Outcome{w, {}};
  SqlResult r;
  for (int64_t fi : rows) {
    if (is_delete) {
      write_row(s, fi, latest_.at(fi).row, true);
      ++r.affected_rows;
    } else if (std::optional<SqlResult> err = update_row(s, st, params, fi, &r)) {
      return Outcome{std::nullopt, std::move(*err)};  // the statement rolls back
    }
  }
  return Outcome{std::nullopt, std::move(r)};
}

std::optional<SqlResult> Engine::update_row(Session& s, const SqlStatement& st,
                                            const std::vector<SqlValue>& params, int64_t fi,
                                            SqlResult* r) {
  Row row = latest_.at(fi).row;
  for (const SqlAssignment& a : st.set) {
    const size_t col = a.column;
    const SqlValue* value = &bound(a.value, params);
    SqlValue sum;
    if (a.base_column) {
      // An integer column plus a constant (Fcount = Fcount + 1); values are
      // stored as canonical integer text, so this parse cannot fail.
      sum = std::to_string(std::stoll(row[*a.base_column]) + a.delta);
      value = &sum;
    }
    auto stored = store_value(col, *value, &r->warnings);  // raised even if nothing changes
    if (auto* err = std::get_if<SqlResult>(&stored)) return *err;
    if (col == kFlockName &&
        unique_key_of(std::get<std::string>(stored)) != unique_key_of(row[kFlockName])) {
      return SqlResult::error(sql_errno::kParseError,
                              "renaming a lock (SET Flock_name) is outside the simulated subset");
    }
    row[col] = std::move(std::get<std::string>(stored));
  }
  // MySQL counts only rows whose values changed (no CLIENT_FOUND_ROWS).
  if (row == latest_.at(fi).row) return std::nullopt;
  write_row(s, fi, std::move(row), false);
  ++r->affected_rows;
  return std::nullopt;
}

void Engine::write_row(Session& s, int64_t findex, Row row, bool deleted) {
  auto it = latest_.find(findex);
  // The version replaced moves to the undo log (latest_'s entry is assigned
  // below; nothing in between reads its row).
  s.undo.push_back(Undo{
      findex, it == latest_.end() ? std::nullopt : std::optional<Latest>(std::move(it->second))});
  if (std::find(s.written.begin(), s.written.end(), findex) == s.written.end()) {
    s.written.push_back(findex);
  }
  remember_key(findex, row[kFlockName]);
  latest_[findex] = Latest{std::move(row), deleted, s.trx};
  refresh_key(findex);
}

}  // namespace locksim::sim::mysql
