// The engine's sessions, transactions, waits and deadlocks. The statement
// bodies (what a SELECT, INSERT or UPDATE reads, locks and writes) are in
// engine_statements.cpp.
#include "sim/mysql/engine.h"

#include <algorithm>
#include <variant>

#include "env/assert.h"

namespace locksim::sim::mysql {

SessionId Engine::open() {
  const SessionId id = next_session_++;
  sessions_.emplace(id, Session{});
  return id;
}

Engine::Session& Engine::session_ref(SessionId id) {
  auto it = sessions_.find(id);
  LOCKSIM_ASSERT_MSG(it != sessions_.end(), "statement on a session that is not open");
  return it->second;
}

bool Engine::in_transaction(SessionId session) const {
  auto it = sessions_.find(session);
  return it != sessions_.end() && it->second.trx != 0;
}

std::optional<uint64_t> Engine::waiting(SessionId session) const {
  auto it = sessions_.find(session);
  if (it == sessions_.end() || !it->second.pending) return std::nullopt;
  return it->second.wait_id;
}

std::vector<FinishedStatement> Engine::take_finished() {
  std::vector<FinishedStatement> out;
  out.swap(finished_);
  return out;
}

StepResult Engine::execute(SessionId id, const std::string& sql,
                           const std::vector<SqlValue>& params) {
  Session& s = session_ref(id);
  LOCKSIM_ASSERT_MSG(!s.pending, "a blocked session sent another statement");
  s.statement_autoinc = 0;  // a new statement allocates its own
  ++statements_;
  // Clients send the same few statement texts over and over: parse each once.
  auto cached = parsed_.find(sql);
  if (cached == parsed_.end()) {
    if (parsed_.size() >= kParsedMax) parsed_.clear();
    Parsed p;
    auto parsed = parse_sql(sql);
    if (auto* st = std::get_if<SqlStatement>(&parsed)) {
      p.statement = std::make_shared<const SqlStatement>(std::move(*st));
    } else {
      p.error = std::move(std::get<SqlResult>(parsed));
    }
    cached = parsed_.emplace(sql, std::move(p)).first;
  }
  const Parsed& parsed = cached->second;
  if (!parsed.statement) return StepResult{false, parsed.error};
  const SqlStatement& st = *parsed.statement;
  if (st.param_count != params.size()) {
    return StepResult{
        false,
        SqlResult::error(sql_errno::kParseError,
                         "statement has " + std::to_string(st.param_count) + " placeholders but " +
                             std::to_string(params.size()) + " values were bound: " + sql)};
  }
  return run_statement(id, parsed.statement, params);
}

StepResult Engine::run_statement(SessionId id, const std::shared_ptr<const SqlStatement>& statement,
                                 const std::vector<SqlValue>& params) {
  Session& s = session_ref(id);
  const SqlStatement& st = *statement;
  switch (st.kind) {
    case SqlStatement::Kind::kBegin: {
      // BEGIN inside a transaction commits it first, as MySQL does.
      const uint64_t seq = commit(s);
      ensure_trx(s);
      s.explicit_trx = true;
      return StepResult{false, SqlResult{}, seq};
    }
    case SqlStatement::Kind::kCommit:
      return StepResult{false, SqlResult{}, commit(s)};
    case SqlStatement::Kind::kRollback:
      rollback(s);
      return StepResult{false, SqlResult{}};
    default:
      break;
  }
  ensure_trx(s);
  if (read_only_ && st.kind != SqlStatement::Kind::kSelect) {
    SqlResult err = SqlResult::error(
        kReadOnlyErrno,
        "The MariaDB server is running with the --read-only option so it cannot execute this "
        "statement");
    uint64_t none = 0;
    return StepResult{false,
                      finish(s, Outcome{std::nullopt, std::move(err)}, s.undo.size(), &none)};
  }
  const size_t mark = s.undo.size();
  Outcome o = run_body(s, st, params);
  if (!o.wait_for) {
    uint64_t seq = 0;
    SqlResult r = finish(s, std::move(o), mark, &seq);
    return StepResult{false, std::move(r), seq};
  }
  s.pending = statement;
  s.pending_params = params;
  s.wait_id = s.wait_seq = next_wait_++;
  if (std::optional<SqlResult> victim = block(id, *o.wait_for)) return StepResult{false, *victim};
  if (!session_ref(id).pending) {
    // Another transaction was the deadlock victim and its rollback let this
    // statement finish at once: answer now rather than "blocked".
    auto it = std::find_if(finished_.begin(), finished_.end(),
                           [id](const FinishedStatement& f) { return f.session == id; });
    LOCKSIM_ASSERT_MSG(it != finished_.end(), "a statement that stopped waiting has finished");
    StepResult r{false, std::move(it->result), it->commit_seq};
    finished_.erase(it);
    return r;
  }
  return StepResult{true, SqlResult{}};
}

Engine::Outcome Engine::run_body(Session& s, const SqlStatement& st,
                                 const std::vector<SqlValue>& params) {
  switch (st.kind) {
    case SqlStatement::Kind::kSelect:
      return do_select(s, st, params);
    case SqlStatement::Kind::kInsert:
      return do_insert(s, st, params);
    case SqlStatement::Kind::kUpdate:
      return do_update(s, st, params, false);
    case SqlStatement::Kind::kDelete:
      return do_update(s, st, params, true);
    default:
      LOCKSIM_ASSERT_MSG(false, "transaction control is not a statement body");
      return Outcome{};
  }
}

SqlResult Engine::finish(Session& s, Outcome outcome, size_t undo_mark, uint64_t* committed) {
  LOCKSIM_ASSERT(!outcome.wait_for);
  *committed = 0;
  // A re-run that went another way leaves the request it waited for.
  if (locks_.cancel_wait(s.trx)) rerun_waiters();
  if (!outcome.result.ok()) rollback_statement(s, undo_mark);
  if (!s.explicit_trx) {
    // Autocommit: the statement was its own transaction.
    if (outcome.result.ok()) {
      *committed = commit(s);
    } else {
      rollback(s);
    }
  }
  return std::move(outcome.result);
}

std::optional<SqlResult> Engine::block(SessionId id, TrxId for_trx) {
  locks_.set_waiting(session_ref(id).trx, for_trx);
  return resolve_deadlock(id);
}

std::optional<SqlResult> Engine::resolve_deadlock(SessionId id) {
  Session& s = session_ref(id);
  const std::vector<TrxId> cycle = locks_.cycle_through(s.trx);
  if (cycle.empty()) return std::nullopt;
  // The victim: least weight; the requester (cycle[0]) on a tie with the least.
  SessionId victim = id;
  uint64_t least = weight(s);
  for (size_t i = 1; i < cycle.size(); ++i) {
    const SessionId other = session_of_trx(cycle[i]);
    const uint64_t w = weight(session_ref(other));
    if (w < least) {
      least = w;
      victim = other;
    }
  }
  ++deadlocks_;
  Session& v = session_ref(victim);
  v.pending.reset();
  locks_.clear_waiting(v.trx);
  SqlResult dead = SqlResult::error(sql_errno::kDeadlock,
                                    "Deadlock found when trying to get lock; try restarting "
                                    "transaction");
  // The victim's answer goes first: the waiters its rollback frees finish after it.
  if (victim != id) finished_.push_back(FinishedStatement{victim, dead});
  rollback(v);  // the whole transaction; frees its locks and re-runs the waiters
  if (victim == id) return dead;
  return std::nullopt;
}

void Engine::rerun_waiters() {
  if (rerunning_) {
    rerun_again_ = true;
    return;
  }
  rerunning_ = true;
  do {
    rerun_again_ = false;
    std::vector<std::pair<uint64_t, SessionId>> order;
    for (const auto& [id, s] : sessions_) {
      if (s.pending) order.emplace_back(s.wait_seq, id);
    }
    std::sort(order.begin(), order.end());
    // Waits that go on are checked for deadlocks only once every waiter had
    // its turn, oldest first, as MariaDB checks the waits a release left
    // after it re-queued them all (lock_rec_dequeue_from_page collects them
    // for the deadlock checker). So two waiters whose re-runs deadlock with
    // each other lose the older one on a tie: it is the requester of the
    // first check (queue_duplicate_waiters_deadlock).
    std::vector<std::pair<uint64_t, SessionId>> still_waiting;
    for (const auto& [seq, id] : order) {
      if (rerun_one(id, seq)) still_waiting.emplace_back(seq, id);
    }
    for (const auto& [seq, id] : still_waiting) {
      auto it = sessions_.find(id);
      if (it == sessions_.end() || !it->second.pending || it->second.wait_seq != seq) continue;
      if (std::optional<SqlResult> dead = resolve_deadlock(id)) {
        finished_.push_back(FinishedStatement{id, *dead});
      }
    }
  } while (rerun_again_);
  rerunning_ = false;
}

bool Engine::rerun_one(SessionId id, uint64_t seq) {
  Session& s = session_ref(id);
  if (!s.pending || s.wait_seq != seq) return false;  // finished or a victim meanwhile
  // The body reads neither the statement's parameters nor the waits-for
  // edges: the parameters are held here while it runs, and the session's
  // edge is replaced or cleared once it has run.
  const SqlStatement& st = *s.pending;  // the session keeps it while the body runs
  std::vector<SqlValue> params = std::move(s.pending_params);
  const size_t mark = s.undo.size();
  Outcome o = run_body(s, st, params);
  if (o.wait_for) {
    // Still blocked (perhaps on another holder): the same wait goes on.
    s.pending_params = std::move(params);
    locks_.set_waiting(s.trx, *o.wait_for);
    return true;
  }
  locks_.clear_waiting(s.trx);
  s.pending.reset();
  uint64_t committed = 0;
  SqlResult r = finish(s, std::move(o), mark, &committed);
  finished_.push_back(FinishedStatement{id, std::move(r), committed});
  return false;
}

void Engine::lock_wait_timeout(SessionId id, uint64_t wait_id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end() || !it->second.pending || it->second.wait_id != wait_id) return;
  Session& s = it->second;
  s.pending.reset();
  locks_.clear_waiting(s.trx);
  finished_.push_back(FinishedStatement{
      id, SqlResult::error(sql_errno::kLockWaitTimeout,
                           "Lock wait timeout exceeded; try restarting transaction")});
  // A blocked statement has written nothing yet (every body locks before it
  // writes), so rolling back the statement is only ending its wait. Its
  // request leaves the queue, which may let requests behind it through.
  if (!s.explicit_trx) {
    rollback(s);
  } else if (locks_.cancel_wait(s.trx)) {
    rerun_waiters();
  }
}

void Engine::close(SessionId id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  it->second.pending.reset();
  if (it->second.trx != 0) locks_.clear_waiting(it->second.trx);
  rollback(it->second);
  sessions_.erase(id);
}

void Engine::drop_all_sessions() {
  std::vector<SessionId> ids;
  for (const auto& [id, s] : sessions_) ids.push_back(id);
  for (SessionId id : ids) close(id);
  finished_.clear();
}

void Engine::ensure_trx(Session& s) {
  if (s.trx != 0) return;
  s.trx = next_trx_++;
  s.explicit_trx = false;
  s.read_view.reset();
}

uint64_t Engine::commit(Session& s) {
  if (s.trx == 0) return 0;
  const uint64_t seq = s.written.empty() ? 0 : ++commit_seq_;
  for (int64_t fi : s.written) {
    auto it = latest_.find(fi);
    if (it == latest_.end() || it->second.writer != s.trx)
      continue;  // undone by a statement rollback
    Latest& l = it->second;
    history_[fi].push_back(
        Version{commit_seq_, l.deleted ? std::nullopt : std::optional<Row>(l.row)});
    committed_changes_.bump();
    l.writer = 0;
    if (l.deleted) {
      latest_.erase(it);
      row_removed(fi);
    }
  }
  const TrxId trx = s.trx;
  for (int64_t fi : s.written) refresh_key(fi);
  s = Session{};
  locks_.release_all(trx);
  rerun_waiters();
  LOCKSIM_ASSERT(seq == 0 || seq <= commit_seq_);
  return seq;
}

void Engine::rollback(Session& s) {
  if (s.trx == 0) return;
  rollback_statement(s, 0);
  const TrxId trx = s.trx;
  s = Session{};
  locks_.release_all(trx);
  rerun_waiters();
}

void Engine::rollback_statement(Session& s, size_t undo_mark) {
  LOCKSIM_ASSERT(undo_mark <= s.undo.size());
  while (s.undo.size() > undo_mark) {
    Undo u = std::move(s.undo.back());
    s.undo.pop_back();
    if (u.before) {
      latest_[u.findex] = std::move(*u.before);
    } else {
      latest_.erase(u.findex);
      row_removed(u.findex);
    }
    refresh_key(u.findex);
  }
}

void Engine::rebuild_unique() {
  unique_.clear();
  unique_hashed_.clear();
  for (const auto& [fi, l] : latest_) {
    remember_key(fi, l.row[kFlockName]);
    const std::string& key = key_of_.at(fi);
    auto it = unique_.find(key);
    // A live row wins over a delete-marked one with the same name.
    if (it == unique_.end() || latest_.at(it->second).deleted) {
      unique_[key] = fi;
      unique_hashed_[key] = fi;
    }
  }
  LOCKSIM_ASSERT(unique_.size() <= latest_.size() && unique_hashed_.size() == unique_.size());
}

void Engine::remember_key(int64_t findex, const std::string& lock_name) {
  const std::string key = unique_key_of(lock_name);
  auto [it, fresh] = key_of_.try_emplace(findex, key);
  if (!fresh && it->second == key) return;
  if (!fresh) {
    // A Findex reused under another name: commits lost in a crash
    // (flush_log_at_trx_commit 0/2) or a demoted primary's lost commits gave
    // their AUTO_INCREMENT values back, as InnoDB does. The old name forgets it.
    const std::string old = it->second;
    std::vector<int64_t>& was = keyed_.at(old);
    was.erase(std::remove(was.begin(), was.end(), findex), was.end());
    it->second = key;
    refresh_unique(old);
    if (was.empty()) keyed_.erase(old);
  }
  std::vector<int64_t>& same = keyed_[key];
  same.insert(std::upper_bound(same.begin(), same.end(), findex), findex);
  LOCKSIM_ASSERT(key_of_.at(findex) == key);
}

void Engine::refresh_key(int64_t findex) {
  const auto k = key_of_.find(findex);
  LOCKSIM_ASSERT_MSG(k != key_of_.end(), "a row changed before its key was remembered");
  refresh_unique(k->second);
}

void Engine::refresh_unique(const std::string& key) {
  const bool was_indexed = unique_hashed_.count(key) != 0;
  std::optional<int64_t> chosen;
  for (int64_t fi : keyed_.at(key)) {  // ascending, as rebuild_unique walks latest_
    auto l = latest_.find(fi);
    if (l == latest_.end()) continue;
    if (!chosen || latest_.at(*chosen).deleted) chosen = fi;
  }
  if (chosen) {
    unique_[key] = *chosen;
    unique_hashed_[key] = *chosen;
  } else {
    unique_.erase(key);
    unique_hashed_.erase(key);
    // The record left uniq_Flock_name: the locks on it move to the gap. An
    // empty name's key is also how the supremum is named: its locks stay.
    if (was_indexed && !key.empty()) {
      locks_.inherit_to_gap({LockIndex::kUniq, key}, {LockIndex::kUniq, next_key_after(key)});
    }
  }
  LOCKSIM_ASSERT(!chosen || key_of_.at(*chosen) == key);
}

void Engine::row_removed(int64_t findex) {
  LOCKSIM_ASSERT(latest_.count(findex) == 0);
  auto next = latest_.upper_bound(findex);
  locks_.inherit_to_gap(
      {LockIndex::kPk, pk_key(findex)},
      {LockIndex::kPk, next == latest_.end() ? std::string() : pk_key(next->first)});
}

SessionId Engine::session_of_trx(TrxId trx) const {
  for (const auto& [id, s] : sessions_) {
    if (s.trx == trx) return id;
  }
  LOCKSIM_ASSERT_MSG(false, "a waits-for edge names a transaction no session has");
  return 0;
}

uint64_t Engine::weight(const Session& s) const {
  // InnoDB's TRX_WEIGHT: undo records plus lock structs (the waiting one
  // included: it is in the queue).
  return s.undo.size() + locks_.lock_count(s.trx);
}

const Row* Engine::committed_row(const std::string& lock_name) const {
  for (const auto& [fi, versions] : history_) {
    if (versions.empty() || !versions.back().row) continue;
    const Row& row = *versions.back().row;
    if (same_unique_key(row[kFlockName], lock_name)) return &row;
  }
  return nullptr;
}

}  // namespace locksim::sim::mysql
