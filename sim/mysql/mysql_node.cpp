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
    : ReplicatedNode(world, net, std::move(name), Duration::zero(), params.replication_lag),
      world_(world),
      net_(net),
      params_(params),
      engine_(params.isolation) {
  world_.count_changes_of(engine_.committed_change_count());
  // Run validation rejects these as bad input (exit 2) before a node is built.
  LOCKSIM_ASSERT(params_.service_time >= Duration::zero());
  LOCKSIM_ASSERT(params_.lock_wait_timeout > Duration::zero());
  LOCKSIM_ASSERT(params_.flush_log_at_trx_commit >= 0 && params_.flush_log_at_trx_commit <= 2);
  LOCKSIM_ASSERT(params_.semi_sync_timeout > Duration::zero());
  node().on_crash = [this] { on_crash(); };
  node().on_restart = [this] { on_restart(); };
  if (params_.flush_log_at_trx_commit != 1) schedule_log_flush();
}

void MysqlNode::submit(SessionId session, uint64_t incarnation,
                       std::shared_ptr<MysqlRequest> request) {
  if (session != 0 && incarnation != incarnation_) {
    // The session died with an earlier incarnation of the server.
    MysqlRequest::answer(std::move(request), 0, incarnation_, lost_connection());
    return;
  }
  const uint64_t inc = incarnation_;
  // The statement's thread runs on the node: a pause holds it, a crash ends it.
  auto start = [this, session, inc, request = std::move(request)]() mutable {
    node().deliver([this, session, inc, request = std::move(request)]() mutable {
      if (inc != incarnation_) return;
      run(session, std::move(request));
    });
  };
  world_.after_fixed(params_.service_time, std::move(start));
}

std::pair<SessionId, uint64_t> MysqlNode::open_session() {
  LOCKSIM_ASSERT_MSG(node().running(), "a handshake answered by a node that is not running");
  const SessionId session = engine_.open();
  LOCKSIM_ASSERT(session != 0 && engine_.is_open(session));
  return {session, incarnation_};
}

void MysqlNode::run(SessionId session, std::shared_ptr<MysqlRequest> request) {
  if (session == 0) session = engine_.open();
  if (!engine_.is_open(session)) {  // closed meanwhile (the client gave up on it)
    MysqlRequest::answer(std::move(request), 0, incarnation_, lost_connection());
    return;
  }
  StepResult r = engine_.execute(session, request->sql, request->params);
  std::vector<Answer> answers = take_answers();
  if (!r.blocked) {
    answers.push_back(Answer{session, std::move(r.result), r.commit_seq, std::move(request)});
  } else {
    waiting_[session] = std::move(request);
    arm_lock_wait_timeout(session);
  }
  collect_finished(answers);
  respond(std::move(answers));
}

std::vector<MysqlNode::Answer> MysqlNode::take_answers() {
  std::vector<Answer> out = std::move(spare_answers_);
  spare_answers_.clear();  // a moved-from vector is valid but unspecified
  LOCKSIM_ASSERT(out.empty());
  return out;
}

void MysqlNode::give_back(std::vector<Answer> answers) {
  answers.clear();
  if (answers.capacity() > spare_answers_.capacity()) spare_answers_ = std::move(answers);
}

void MysqlNode::arm_lock_wait_timeout(SessionId session) {
  LOCKSIM_ASSERT_MSG(engine_.waiting(session).has_value(), "blocked means waiting");
  const uint64_t wait = *engine_.waiting(session);
  const uint64_t inc = incarnation_;
  world_.after_fixed(params_.lock_wait_timeout, [this, session, wait, inc] {
    node().deliver([this, session, wait, inc] {
      if (inc != incarnation_) return;
      engine_.lock_wait_timeout(session, wait);
      std::vector<Answer> answers = take_answers();
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
      a.send(incarnation_);
    }
  }
  give_back(std::move(answers));
}

void MysqlNode::disconnect(SessionId session, uint64_t incarnation) {
  if (session == 0 || incarnation != incarnation_) return;
  waiting_.erase(session);  // nobody reads that answer any more
  engine_.close(session);
  std::vector<Answer> answers = take_answers();
  collect_finished(answers);
  respond(std::move(answers));
}

void MysqlNode::on_crash() {
  LOCKSIM_ASSERT(node().crashed());
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
  LOCKSIM_ASSERT(node().running());
  if (role() == Role::kPrimary) {
    // Replicas resync to whatever came back (Redis-style full resync; a real
    // primary that lost commits leaves its replicas ahead of it), each under
    // a number of its own.
    for (MysqlNode* r : replicas()) resync(*r);
  } else {
    resync_from_primary();
  }
}

void MysqlNode::schedule_log_flush() {
  world_.after(kLogFlushPeriod, [this] {
    if (node().running()) disk_ = engine_.committed_image();
    schedule_log_flush();
  });
}

void MysqlNode::on_promoted() {
  engine_.set_read_only(false);
  binlogged_commit_ = engine_.commit_seq();
  acked_seq_ = shipped_seq();  // nothing shipped before the promotion is waited for
  semi_sync_on_ = true;
}

void MysqlNode::on_following(bool was_primary) {
  if (was_primary) {
    // A demoted primary: the failover tool kills its client connections.
    ++incarnation_;
    waiting_.clear();
    held_.clear();
    engine_.drop_all_sessions();
  }
  engine_.set_read_only(true);
}

}  // namespace locksim::sim::mysql
