// The simulated MariaDB/InnoDB server: a pure step function over sessions.
//
// Pure means: no network, no fibers, no timers. The node wrapper delivers
// each statement with the server's clock; a statement that must wait for a
// row lock returns "blocked" and is finished later — when the lock holder
// commits or rolls back (the engine re-runs waiting statements, oldest wait
// first, and reports what finished through take_finished()), or when the
// wrapper's innodb_lock_wait_timeout timer calls lock_wait_timeout().
//
// Semantics modelled (MariaDB 10.11, InnoDB, REPEATABLE READ; READ COMMITTED
// differs where noted under Isolation below):
//   - autocommit: a statement outside BEGIN/START TRANSACTION is its own
//     transaction; BEGIN commits an open one first (implicit commit).
//   - plain SELECT reads the transaction's snapshot, taken at its first plain
//     SELECT; FOR UPDATE / LOCK IN SHARE MODE, UPDATE, DELETE and INSERT's
//     duplicate check read the latest committed row (and the own writes).
//   - locks (see lock_manager.h): a key lookup that finds its row locks the
//     record (S or X) on the unique key and the primary key; one that finds
//     none locks the gap before the next key. INSERT takes an insert
//     intention on that gap, checks for a duplicate under an S lock (1062
//     when the row exists, the S lock kept, as InnoDB keeps it), and holds
//     the new row X-locked until the end of the transaction.
//   - deadlock: when a wait closes a cycle in the wait-for graph, the victim
//     is the transaction of least weight — undo entries plus locks held, as
//     InnoDB's TRX_WEIGHT — and on a tie the requester itself (MariaDB's
//     Deadlock::report prefers the transaction whose wait closed the cycle
//     when it is as light as the lightest). The victim's statement gets 1213
//     and its whole transaction rolls back.
//   - a lock wait timeout (1205) rolls back the waiting statement only; the
//     transaction stays open (innodb_rollback_on_timeout=OFF).
//   - errors inside a transaction (1062, a bad value) roll back the statement.
//   - close(): rolls the session's transaction back and frees its locks.
//   - AUTO_INCREMENT values are never given back, even on rollback.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "env/sql_connection.h"
#include "sim/change_count.h"
#include "sim/mysql/lock_manager.h"
#include "sim/mysql/schema.h"
#include "sim/mysql/sql_statement.h"

namespace locksim::sim::mysql {

using SessionId = uint64_t;

// What execute() answered: a result, or "blocked" (the result comes later
// through take_finished()).
// commit_seq: the commit sequence number when the statement committed a
// transaction that changed rows (COMMIT, an implicit commit, an autocommit
// write), else 0 — what the node waits on for semi-synchronous replication.
struct StepResult {
  bool blocked = false;
  SqlResult result;
  uint64_t commit_seq = 0;
};

struct FinishedStatement {
  SessionId session;
  SqlResult result;
  uint64_t commit_seq = 0;
};

// The committed contents of the table, as the redo log on disk or a binlog
// shipment carries them: every row's latest committed version, and the
// AUTO_INCREMENT counter. Whole images are exact for the few rows a lock
// table holds, and keep a replica a consistent prefix of its primary.
struct TableImage {
  std::map<int64_t, Row> rows;  // by Findex
  int64_t auto_increment = 1;
  bool operator==(const TableImage&) const = default;
};

// The transaction isolation level every session runs at (the server's
// transaction_isolation; the lock algorithms never change it per session).
//   - kRepeatableRead, InnoDB's default: one snapshot per transaction, taken
//     at its first plain SELECT; gap locks and next-key locks as above.
//   - kReadCommitted: a fresh snapshot for each plain SELECT, and no gap
//     locks for searches: a locking read, UPDATE or DELETE that finds no row
//     locks nothing, and one that finds its row locks the record alone. So
//     v1's two missing-row inserters no longer deadlock: the second INSERT
//     waits for the first's uncommitted row and gets 1062 when it commits.
//     Not modelled: InnoDB also releases the lock on a row a locking
//     statement read but whose other WHERE conditions did not match (the
//     algorithms' only such statement, the checked release, runs in
//     autocommit, where the lock ends with the statement anyway).
enum class Isolation { kRepeatableRead, kReadCommitted };

// Error 1290 (ER_OPTION_PREVENTS_STATEMENT): a write on a read_only replica.
inline constexpr int kReadOnlyErrno = 1290;

class Engine {
 public:
  explicit Engine(Isolation isolation = Isolation::kRepeatableRead) : isolation_(isolation) {}
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Opens a session (a client connection). Ids are never reused.
  SessionId open();

  // Runs one statement of `session`. Precondition: the session is open and
  // not blocked (a client waits for its answer before the next statement).
  StepResult execute(SessionId session, const std::string& sql,
                     const std::vector<SqlValue>& params);

  // Statements that finished after blocking, in the order they finished
  // (including 1213 for a victim chosen while waiting). Clears the list.
  std::vector<FinishedStatement> take_finished();

  // The session's current lock wait, numbered so a timer can tell whether
  // the wait it was set for is still the one in progress; nullopt when the
  // session is not blocked.
  std::optional<uint64_t> waiting(SessionId session) const;

  // innodb_lock_wait_timeout expired for wait `wait_id` of `session`: if that
  // wait is still in progress, its statement finishes with 1205 (reported by
  // take_finished()) and the statement alone is rolled back.
  void lock_wait_timeout(SessionId session, uint64_t wait_id);

  // The connection closed or broke: rolls back the open transaction, drops a
  // blocked statement, frees the locks. Unknown or closed sessions: nothing.
  void close(SessionId session);

  // A crash of the server: every session and open transaction is gone, the
  // committed rows stay (the caller decides what survives the restart).
  void drop_all_sessions();

  // The committed contents now (uncommitted changes left out).
  TableImage committed_image() const;
  // Makes `image` the committed contents, as one transaction: rows that
  // differ get a new committed version (open snapshots keep their view),
  // rows the image lacks are deleted. Used by a replica applying a binlog
  // shipment and by crash recovery. Precondition (asserted): no session has
  // uncommitted changes (a replica refuses writes; a crash rolled them back).
  void apply_image(const TableImage& image);
  // read_only=ON, as on a replica: INSERT, UPDATE and DELETE get 1290.
  void set_read_only(bool on) { read_only_ = on; }
  bool read_only() const { return read_only_; }
  // Commits that changed rows so far (also counts applied images).
  uint64_t commit_seq() const { return commit_seq_; }

  // Observation for tests, the node and the exposure checker.
  // The latest committed row of lock `name`, or nullptr; valid until the
  // next statement. Does not allocate (the exposure probe runs it after
  // every event of a hold).
  const Row* committed_row(const std::string& lock_name) const;
  uint64_t deadlocks() const { return deadlocks_; }
  uint64_t statements() const { return statements_; }
  // Bumped whenever a committed version is added (a commit that wrote rows,
  // an image applied): what committed_row() answers can change only then.
  // Counted in the World's state_changes() once attached (MysqlNode does).
  ChangeCount& committed_change_count() { return committed_changes_; }
  bool in_transaction(SessionId session) const;
  bool is_open(SessionId session) const { return sessions_.count(session) != 0; }
  size_t open_sessions() const { return sessions_.size(); }

 private:
  struct Latest {
    Row row;
    bool deleted = false;  // delete-marked by `writer`, not yet committed
    TrxId writer = 0;      // 0 when committed
  };
  struct Version {
    uint64_t commit_seq;
    std::optional<Row> row;  // nullopt: deleted at commit_seq
  };
  struct Undo {
    int64_t findex;
    std::optional<Latest> before;  // nullopt: the row did not exist
  };
  struct Session {
    TrxId trx = 0;  // 0: no transaction open
    bool explicit_trx = false;
    std::optional<uint64_t> read_view;  // commit_seq of the snapshot
    std::vector<Undo> undo;
    std::vector<int64_t> written;  // rows this transaction changed
    // The blocked statement, when waiting (shared with the parse cache).
    std::shared_ptr<const SqlStatement> pending;
    std::vector<SqlValue> pending_params;
    uint64_t wait_id = 0;
    uint64_t wait_seq = 0;          // order of waits, for re-running oldest first
    int64_t statement_autoinc = 0;  // the AUTO_INCREMENT value this statement took; 0: none
  };

  // Outcome of a statement body: done with a result, or must wait for `trx`.
  struct Outcome {
    std::optional<TrxId> wait_for;
    SqlResult result;
  };

  Session& session_ref(SessionId id);
  StepResult run_statement(SessionId id, const std::shared_ptr<const SqlStatement>& statement,
                           const std::vector<SqlValue>& params);
  Outcome run_body(Session& s, const SqlStatement& st, const std::vector<SqlValue>& params);
  // Ends a statement that did not block: statement rollback on error, the
  // autocommit commit or rollback.
  // *committed: the commit's sequence number when it committed changes, else 0.
  SqlResult finish(Session& s, Outcome outcome, size_t undo_mark, uint64_t* committed);
  // Makes the session wait for `for_trx` and runs deadlock detection.
  // Returns the session's own 1213 when it was chosen as the victim.
  std::optional<SqlResult> block(SessionId id, TrxId for_trx);
  // Deadlock detection for a session that waits: when its wait closes a
  // cycle, rolls back the victim. Returns the session's own 1213 when it is
  // the victim.
  std::optional<SqlResult> resolve_deadlock(SessionId id);
  // Re-runs every waiting statement, oldest wait first, after locks were
  // released; deadlock detection follows for the waits that go on.
  void rerun_waiters();
  // Re-runs the statement session `id` waits with (if wait `seq` is still
  // in progress): true when it still waits (its edge set, not yet checked).
  bool rerun_one(SessionId id, uint64_t seq);
  // A row left latest_ (an insert undone, a delete committed): the locks on
  // its primary-key record move to the gap, as InnoDB's purge moves them.
  void row_removed(int64_t findex);
  // The primary key as a lock key: zero-padded so text order is number order.
  static std::string pk_key(int64_t findex);
  static void write_pk_key(int64_t findex, std::string& key);  // into key's room
  // The primary-key record's lock target, in a member reused by every call
  // (its key keeps its room): valid until the next call. For a lookup or an
  // acquire, which copies what it keeps.
  const LockTarget& pk_target(int64_t findex);
  // The unique index over latest_: rebuilt whole (rebuild_unique) or for the
  // one key a change touched (refresh_key). A key names the first live row
  // with it in Findex order, else the last delete-marked one.
  void rebuild_unique();
  void refresh_key(int64_t findex);

  // Transactions.
  void ensure_trx(Session& s);
  // Returns the commit's sequence number when it changed rows, else 0.
  uint64_t commit(Session& s);
  void rollback(Session& s);
  void rollback_statement(Session& s, size_t undo_mark);
  SessionId session_of_trx(TrxId trx) const;
  uint64_t weight(const Session& s) const;

  // Statement bodies (engine_statements.cpp).
  Outcome do_select(Session& s, const SqlStatement& st, const std::vector<SqlValue>& params);
  Outcome do_insert(Session& s, const SqlStatement& st, const std::vector<SqlValue>& params);
  Outcome do_update(Session& s, const SqlStatement& st, const std::vector<SqlValue>& params,
                    bool is_delete);
  // Locks what the statement's search reads with `kind` (and the gaps
  // REPEATABLE READ locks with it) and sets *rows to the rows that match
  // the whole WHERE, in index order. Returns whom to wait for.
  std::optional<TrxId> lock_rows(Session& s, const SqlStatement& st,
                                 const std::vector<SqlValue>& params, LockKind kind,
                                 std::vector<int64_t>* rows);
  // UPDATE's SET on row `fi` (locked), counting it in r->affected_rows when
  // it changed. Returns the error that rolls the statement back.
  std::optional<SqlResult> update_row(Session& s, const SqlStatement& st,
                                      const std::vector<SqlValue>& params, int64_t fi,
                                      SqlResult* r);
  // Range and full scans (engine_scan.cpp). lock_scan locks as lock_rows
  // says: REPEATABLE READ, a next-key lock on every record scanned, from the
  // first in the range to the first past it (and on the primary-key record
  // of a unique-index entry), or the gap before the supremum when the scan
  // runs off the end; READ COMMITTED, the matching records alone.
  std::optional<TrxId> lock_scan(Session& s, const SqlStatement& st,
                                 const std::vector<SqlValue>& params, LockKind kind,
                                 std::vector<int64_t>* matched);
  // The rows a plain SELECT's scan reads from the session's snapshot; valid
  // until the engine changes (as snapshot_row's).
  std::vector<const Row*> snapshot_scan(const Session& s, const SqlStatement& st,
                                        const std::vector<SqlValue>& params) const;
  // The records the statement's scan walks, in index order: (lock key, Findex).
  std::vector<std::pair<std::string, int64_t>> scanned_index(const SqlStatement& st) const;
  // Finds the row a WHERE's key names and locks it (or its gap) with `kind`.
  // Sets *findex to the row found (latest version, own writes included).
  std::optional<TrxId> lock_key(Session& s, const SqlCondition& key,
                                const std::vector<SqlValue>& params, LockKind kind,
                                std::optional<int64_t>* findex);
  // The version of row `findex` the session's snapshot sees (its own writes
  // included), or nullptr; valid until the engine changes.
  const Row* snapshot_row(const Session& s, int64_t findex) const;
  std::optional<int64_t> find_latest(const SqlCondition& key,
                                     const std::vector<SqlValue>& params) const;
  std::optional<int64_t> find_snapshot(const Session& s, const SqlCondition& key,
                                       const std::vector<SqlValue>& params) const;
  std::string next_key_after(const std::string& unique_key) const;
  // Takes a lock that cannot wait (a gap lock, an inserter's X lock on its
  // new row), asserting it was granted; taken also when asserts are off.
  void acquire_granted(TrxId trx, const LockTarget& target, LockKind kind);
  void write_row(Session& s, int64_t findex, Row row, bool deleted);

  std::map<SessionId, Session> sessions_;
  LockManager locks_;
  std::map<int64_t, Latest> latest_;                 // by Findex
  std::map<int64_t, std::vector<Version>> history_;  // committed versions, oldest first
  std::map<std::string, int64_t> unique_;            // unique_key_of(name) -> Findex, over latest_
  // unique_ again, hashed, for the lookups of one key (every re-run of a
  // waiting statement does one); changed wherever unique_ is.
  std::unordered_map<std::string, int64_t> unique_hashed_;
  // Every Findex written and its unique key, both ways. Statements never
  // rename a row (renames are refused); a Findex changes its name only when
  // lost commits give its AUTO_INCREMENT value back (remember_key); they make the
  // unique index and snapshot lookups by name O(log n) instead of a scan.
  std::map<int64_t, std::string> key_of_;
  std::map<std::string, std::vector<int64_t>> keyed_;  // ascending Findex
  void remember_key(int64_t findex, const std::string& lock_name);
  void refresh_unique(const std::string& key);
  std::vector<FinishedStatement> finished_;
  SessionId next_session_ = 1;
  TrxId next_trx_ = 1;
  uint64_t commit_seq_ = 0;
  ChangeCount committed_changes_;
  uint64_t next_wait_ = 1;
  int64_t auto_increment_ = 1;
  uint64_t deadlocks_ = 0;
  bool rerunning_ = false;  // rerun_waiters is on the stack: loop there, do not recurse
  bool rerun_again_ = false;
  uint64_t statements_ = 0;
  bool read_only_ = false;
  Isolation isolation_;
  // Parsed statements by text; parse_sql is a pure function of the text. A
  // client sending ever new texts (literals inlined) only refills it. A
  // statement is shared with the sessions blocked in it (Session::pending);
  // when `statement` is null the text is an error, `error`.
  struct Parsed {
    std::shared_ptr<const SqlStatement> statement;
    SqlResult error;
  };
  std::unordered_map<std::string, Parsed> parsed_;
  static constexpr size_t kParsedMax = 256;
  // The rows a locking SELECT, UPDATE or DELETE matched (lock_rows), kept
  // between statements for its room: one statement runs at a time.
  std::vector<int64_t> matched_;
  LockTarget pk_target_;  // pk_target()'s
};

}  // namespace locksim::sim::mysql
