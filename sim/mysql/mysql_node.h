// A simulated mariadbd on a simulated node: the pure Engine joined to the
// world, its durability, and its place in a replication topology.
//
//   - One server thread per connection, as MariaDB's default
//     thread-per-connection: a statement starts `service_time` after it
//     arrives (parse, optimise, touch the B-tree) and is then executed at
//     once; statements of different sessions overlap in that time, so
//     contention shows up where InnoDB puts it, in the lock waits.
//   - A statement that waits for a row lock is answered when the engine
//     finishes it (the holder commits or rolls back, or a deadlock victim is
//     chosen), or with 1205 innodb_lock_wait_timeout later (true time).
//   - A paused node queues statements and timers (they run on resume); a
//     crashed one drops every session (their transactions roll back, as crash
//     recovery rolls back what was not committed) and answers nothing.
//   - Durability, innodb_flush_log_at_trx_commit: 1 writes and fsyncs the redo
//     log at every commit, so a crash-restart keeps every commit; 0 (written
//     and fsynced once a second) and 2 (written at commit, fsynced once a
//     second) both lose the commits of up to the last second when the machine
//     crashes — locksim's crash fault is a machine crash (power loss, kernel
//     panic), where the OS page cache that saves 2 from a mere mysqld crash
//     is gone too. The once-a-second flush runs at every whole second of true
//     time.
//   - Replication (sim/replication.h, and replication.cpp for the binlog and
//     semi-sync): a primary ships its binlog to its replicas replication_lag
//     after each commit; a replica is read_only. With
//     semi-synchronous replication a committing statement is answered only
//     once a replica acknowledged the commit (rpl_semi_sync_master_wait_point
//     AFTER_COMMIT, MariaDB's default: others see the commit before the ack),
//     or after semi_sync_timeout, when the primary falls back to asynchronous
//     replication until a replica catches up (rpl_semi_sync_master_timeout).
//   - The server's clock is not read: the algorithms compute deadlines on the
//     client's clock (the article's `new Date()`), and no statement of the
//     subset calls NOW().
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "env/argv_pool.h"
#include "env/sql_connection.h"
#include "sim/mysql/engine.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/replication.h"
#include "sim/world.h"

namespace locksim::sim::mysql {

struct MysqlParams {
  Duration service_time = Duration::micros(200);       // per statement, on the server
  Duration lock_wait_timeout = Duration::seconds(50);  // innodb_lock_wait_timeout
  Duration client_timeout = Duration::seconds(60);     // the client library's read timeout
  int flush_log_at_trx_commit = 1;                     // innodb_flush_log_at_trx_commit: 0, 1, 2
  // transaction_isolation of every session (engine.h says what differs).
  Isolation isolation = Isolation::kRepeatableRead;
  // Topology: replicas of the primary mysql-1 (mysql-1-r1, ...), how far
  // behind they run, semi-synchronous replication, and failover by a monitor
  // (MHA/orchestrator-like) that promotes the most up-to-date reachable
  // replica after the primary has been unreachable for down_after; clients
  // follow discovery_delay later.
  int replicas = 0;
  Duration replication_lag = Duration::millis(10);
  bool semi_sync = false;
  Duration semi_sync_timeout = Duration::seconds(10);  // rpl_semi_sync_master_timeout
  bool failover = false;
  Duration down_after = Duration::seconds(5);
  Duration discovery_delay = Duration::seconds(1);

  static constexpr int kReplicasMax = 8;
};

// One statement on its way to a MysqlNode and its answer on the way back, as
// the client library hands it over: the text, the values bound to its `?`,
// and where the answer goes. Shared by the client waiting for it and the
// events carrying it, so one allocation serves the whole round trip.
class MysqlRequest {
 public:
  MysqlRequest(std::string_view sql, std::vector<SqlValue> params)
      : sql(argv_pool::take_text(sql)), params(std::move(params)) {}
  // The text and the parameters go back to their thread's pool for the next
  // statement (env/argv_pool.h; algorithms/sql_params.h takes parameters from it).
  virtual ~MysqlRequest() {
    argv_pool::give_back_text(std::move(sql));
    argv_pool::give_back(std::move(params));
  }
  MysqlRequest(const MysqlRequest&) = delete;
  MysqlRequest& operator=(const MysqlRequest&) = delete;

  // The answer to `request`, given once, at the node, with the session, the
  // server's incarnation and the result — or never, when the node crashes
  // first. The request is handed over with it (the answer may carry it back).
  static void answer(std::shared_ptr<MysqlRequest> request, SessionId session, uint64_t incarnation,
                     SqlResult&& result) {
    MysqlRequest& r = *request;
    r.on_answer(std::move(request), session, incarnation, std::move(result));
  }

  // Both read, never changed, until the destructor gives them back.
  std::string sql;
  std::vector<SqlValue> params;

 protected:
  // `self` is this request.
  virtual void on_answer(std::shared_ptr<MysqlRequest> self, SessionId session,
                         uint64_t incarnation, SqlResult&& result) = 0;
};

// A MySQL server is the primary or a replica of the group; the role changes
// and the binlog shipments are sim/replication.h's.
class MysqlNode : public ReplicatedNode<MysqlNode, TableImage> {
 public:
  MysqlNode(World& world, Network& net, std::string name, const MysqlParams& params);

  Engine& engine() { return engine_; }
  // Bumped by each crash and each demotion: sessions of an older incarnation are gone.
  uint64_t incarnation() const { return incarnation_; }
  uint64_t semi_sync_timeouts() const { return semi_sync_timeouts_; }

  // Server side of one statement, called on arrival at the node. `session`
  // 0 opens a new session (reported through the answer's session).
  // The request is answered once (MysqlRequest::answer), at the node — or
  // never, when the node crashes first.
  void submit(SessionId session, uint64_t incarnation, std::shared_ptr<MysqlRequest> request);
  // The client closed its connection (or gave up on it).
  void disconnect(SessionId session, uint64_t incarnation);
  // The connection handshake: a new session, and the incarnation it lives
  // in. Called at the node, on a running node (the connection's delivery).
  std::pair<SessionId, uint64_t> open_session();

  // Role changes (become_primary, become_replica_of) are made by the group
  // (mysql_group.h). Becoming a replica ends every client session when the
  // node was the primary (the failover tool kills them) and makes the node
  // read_only; promotion makes it writable.

  // The redo log's once-a-second flush (flush_log_at_trx_commit 0 and 2).
  static constexpr Duration kLogFlushPeriod = Duration::seconds(1);

 private:
  // A statement's answer on its way out (see respond()).
  struct Answer {
    SessionId session;
    SqlResult result;
    uint64_t commit_seq;  // the engine's, 0 when it committed no change
    std::shared_ptr<MysqlRequest> request;
    void send(uint64_t incarnation) {
      MysqlRequest::answer(std::move(request), session, incarnation, std::move(result));
    }
  };
  // An answer held for a semi-synchronous acknowledgement.
  struct HeldAnswer {
    uint64_t binlog_seq;
    Answer answer;
  };

  void run(SessionId session, std::shared_ptr<MysqlRequest> request);
  void arm_lock_wait_timeout(SessionId session);
  // Collects the statements the engine finished meanwhile.
  void collect_finished(std::vector<Answer>& out);
  // Ships new commits, then answers (or holds the answers for semi-sync).
  void respond(std::vector<Answer> answers);
  void on_crash();
  void on_restart();
  void schedule_log_flush();

  // Replication (replication.cpp).
  friend class ReplicatedNode<MysqlNode, TableImage>;
  bool semi_sync_waits() const;
  void binlog_new_commits();
  // ReplicatedNode's hooks (and incarnation() above).
  TableImage shipment() const { return engine_.committed_image(); }
  void install_shipment(const TableImage& image, uint64_t seq);
  void on_promoted();
  void on_following(bool was_primary);
  void on_ack(uint64_t seq, uint64_t incarnation);
  void hold_for_ack(Answer answer);
  void release_acked();
  void semi_sync_timeout(uint64_t binlog_seq, uint64_t incarnation);

  World& world_;
  Network& net_;
  MysqlParams params_;
  Engine engine_;
  std::map<SessionId, std::shared_ptr<MysqlRequest>> waiting_;  // blocked statements
  // An empty vector kept for its capacity between statements: what
  // take_answers() hands out and give_back() returns.
  std::vector<Answer> spare_answers_;
  std::vector<Answer> take_answers();
  void give_back(std::vector<Answer> answers);
  uint64_t incarnation_ = 0;
  TableImage disk_;  // the redo log as of the last flush (flush_log_at_trx_commit 0, 2)

  uint64_t binlogged_commit_ = 0;  // primary: engine commit_seq already shipped
  uint64_t acked_seq_ = 0;         // primary: highest acknowledged shipment
  bool semi_sync_on_ = true;       // off after a timeout, until a replica catches up
  std::vector<HeldAnswer> held_;   // answers waiting for an ack, in binlog order
  uint64_t semi_sync_timeouts_ = 0;
};

}  // namespace locksim::sim::mysql
