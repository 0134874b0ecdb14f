// The server node: statements, lock-wait timers, crashes and durability.
// Replication is in replication.cpp.
#include "sim/mysql/mysql_node.h"

#include <utility>

#include "env/assert.h"

namespace locksim::sim::mysql {

namespace {

SqlResult lost_connection() {
  return SqlResult::error(sql_errno::kServerLost, "Lost connection to MySQL server during query");
}

}  // namespace

MysqlNode::MysqlNode(World& world, Network& net, std::string name, const MysqlParams& params)
    : world_(world), net_(net), node_(world, std::move(name)), params_(params) {
  // Run validation rejects these as bad input (exit 2) before a node is built.
  LOCKSIM_ASSERT(params_.service_time >= Duration::zero());
  LOCKSIM_ASSERT(params_.lock_wait_timeout > Duration::zero());
  LOCKSIM_ASSERT(params_.flush_log_at_trx_commit >= 0 && params_.flush_log_at_trx_commit <= 2);
  LOCKSIM_ASSERT(params_.replication_lag >= Duration::zero());
  LOCKSIM_ASSERT(params_.semi_sync_timeout > Duration::zero());
  node_.on_crash = [this] { on_crash(); };
  node_.on_restart = [this] { on_restart(); };
  if (params_.flush_log_at_trx_commit != 1) schedule_log_flush();
}

void MysqlNode::submit(SessionId session, uint64_t incarnation, std::string sql,
                       std::vector<SqlValue> params, Reply reply) {
  if (session != 0 && incarnation != incarnation_) {
    // The session died with an earlier incarnation of the server.
    reply(0, incarnation_, lost_connection());
    return;
  }
  const uint64_t inc = incarnation_;
  world_.after(params_.service_time,
               [this, session, inc, sql = std::move(sql), params = std::move(params),
                reply = std::move(reply)]() mutable {
                 // The statement's thread runs on the node: a pause holds it, a crash ends it.
                 node_.deliver([this, session, inc, sql = std::move(sql),
                                params = std::move(params), reply = std::move(reply)] {
                   if (inc != incarnation_) return;
                   run(session, sql, params, reply);
                 });
               });
}

std::pair<SessionId, uint64_t> MysqlNode::open_session() {
  LOCKSIM_ASSERT_MSG(node_.running(), "a handshake answered by a node that is not running");
  const SessionId session = engine_.open();
  LOCKSIM_ASSERT(session != 0 && engine_.is_open(session));
  return {session, incarnation_};
}

void MysqlNode::run(SessionId session, const std::string& sql, const std::vector<SqlValue>& params,
                    Reply reply) {
  if (session == 0) session = engine_.open();
  if (!engine_.is_open(session)) {  // closed meanwhile (the client gave up on it)
    reply(0, incarnation_, lost_connection());
    return;
  }
  StepResult r = engine_.execute(session, sql, params);
  std::vector<Answer> answers;
  if (!r.blocked) {
    answers.push_back(Answer{session, std::move(r.result), r.commit_seq, std::move(reply)});
  } else {
    waiting_[session] = std::move(reply);
    arm_lock_wait_timeout(session);
  }
  collect_finished(answers);
  respond(std::move(answers));
}

void MysqlNode::arm_lock_wait_timeout(SessionId session) {
  LOCKSIM_ASSERT_MSG(engine_.waiting(session).has_value(), "blocked means waiting");
  const uint64_t wait = *engine_.waiting(session);
  const uint64_t inc = incarnation_;
  world_.after(params_.lock_wait_timeout, [this, session, wait, inc] {
    node_.deliver([this, session, wait, inc] {
      if (inc != incarnation_) return;
      engine_.lock_wait_timeout(session, wait);
      std::vector<Answer> answers;
      collect_finished(answers);
      respond(std::move(answers));
    });
  });
}

void MysqlNode::collect_finished(std::vector<Answer>& out) {
  for (FinishedStatement& f : engine_.take_finished()) {
    auto it = waiting_.find(f.session);
    LOCKSIM_ASSERT_MSG(it != waiting_.end(), "a statement finished that was not waiting");
    out.push_back(Answer{f.session, std::move(f.result), f.commit_seq, std::move(it->second)});
    waiting_.erase(it);
  }
}

void MysqlNode::respond(std::vector<Answer> answers) {
  binlog_new_commits();
  for (Answer& a : answers) {
    LOCKSIM_ASSERT_MSG(a.commit_seq <= engine_.commit_seq(), "an answer from a future commit");
    if (a.commit_seq != 0 && semi_sync_waits()) {
      hold_for_ack(std::move(a));
    } else {
      a.reply(a.session, incarnation_, std::move(a.result));
    }
  }
}

void MysqlNode::disconnect(SessionId session, uint64_t incarnation) {
  if (session == 0 || incarnation != incarnation_) return;
  waiting_.erase(session);  // nobody reads that answer any more
  engine_.close(session);
  std::vector<Answer> answers;
  collect_finished(answers);
  respond(std::move(answers));
}

void MysqlNode::on_crash() {
  LOCKSIM_ASSERT(node_.crashed());
  ++incarnation_;
  waiting_.clear();
  held_.clear();  // their clients never hear back; the commits stay (AFTER_COMMIT)
  engine_.drop_all_sessions();
  // What the machine's crash takes with it: with the log flushed only once a
  // second, every commit since the last flush.
  if (params_.flush_log_at_trx_commit != 1) engine_.apply_image(disk_);
  binlogged_commit_ = engine_.commit_seq();  // what was never shipped is gone with the binlog
}

void MysqlNode::on_restart() {
  LOCKSIM_ASSERT(node_.running());
  if (role_ == Role::kPrimary) {
    // Replicas resync to whatever came back (Redis-style full resync; a real
    // primary that lost commits leaves its replicas ahead of it).
    for (MysqlNode* r : replicas_) ship(*r, ++shipped_seq_, engine_.committed_image());
  } else if (primary_ != nullptr) {
    applied_seq_ = 0;
    primary_->ship(*this, ++primary_->shipped_seq_, primary_->engine_.committed_image());
  }
}

void MysqlNode::schedule_log_flush() {
  world_.after(kLogFlushPeriod, [this] {
    if (node_.running()) disk_ = engine_.committed_image();
    schedule_log_flush();
  });
}

void MysqlNode::become_primary() {
  LOCKSIM_ASSERT_MSG(role_ == Role::kReplica, "promoting a node that is not a replica");
  if (primary_ != nullptr) {
    auto& siblings = primary_->replicas_;
    std::erase(siblings, this);
  }
  role_ = Role::kPrimary;
  primary_ = nullptr;
  engine_.set_read_only(false);
  binlogged_commit_ = engine_.commit_seq();
  acked_seq_ = shipped_seq_;
  semi_sync_on_ = true;
  LOCKSIM_ASSERT(replicas_.empty());  // followers are re-pointed by the group
}

void MysqlNode::become_replica_of(MysqlNode& primary) {
  LOCKSIM_ASSERT_MSG(&primary != this, "a node made a replica of itself");
  LOCKSIM_ASSERT_MSG(primary.role_ == Role::kPrimary, "a node made a replica of a replica");
  if (primary_ != nullptr && primary_ != &primary) std::erase(primary_->replicas_, this);
  if (role_ == Role::kPrimary) {
    // A demoted primary: the failover tool kills its client connections.
    ++incarnation_;
    waiting_.clear();
    held_.clear();
    engine_.drop_all_sessions();
  }
  replicas_.clear();
  role_ = Role::kReplica;
  primary_ = &primary;
  applied_seq_ = 0;
  engine_.set_read_only(true);
  if (std::find(primary.replicas_.begin(), primary.replicas_.end(), this) ==
      primary.replicas_.end()) {
    primary.replicas_.push_back(this);
  }
  LOCKSIM_ASSERT(std::count(primary.replicas_.begin(), primary.replicas_.end(), this) == 1);
  // Full resync: the replica's contents are replaced by the primary's.
  primary.ship(*this, ++primary.shipped_seq_, primary.engine_.committed_image());
}

void MysqlNode::resync_if_behind(MysqlNode& replica) {
  if (role_ != Role::kPrimary || replica.primary_ != this) return;
  auto it = sent_.find(replica.name());
  if (it == sent_.end() || replica.applied_seq_ >= it->second.seq) return;
  if (world_.now() - it->second.at < params_.replication_lag + kResyncGrace) return;
  ship(replica, ++shipped_seq_, engine_.committed_image());
}

}  // namespace locksim::sim::mysql
