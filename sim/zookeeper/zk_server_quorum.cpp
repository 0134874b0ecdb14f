// ZkServer's quorum half: the leader's proposals, commits and session
// tracker, and the follower's log. (The client half is in zk_server.cpp.)
#include <algorithm>

#include "env/assert.h"
#include "sim/local_shared.h"
#include "sim/zookeeper/ensemble.h"
#include "sim/zookeeper/zk_client.h"
#include "sim/zookeeper/zk_server.h"

namespace locksim::sim::zookeeper {

ZkServer* ZkServer::leader_or_null() {
  if (role_ == Role::kLooking || leader_id_ == 0) return nullptr;
  return &ensemble_.server(leader_id_);
}

void ZkServer::forward_error(int origin, ConnId conn, int64_t xid, ZkError e) {
  ZkServer* target = &ensemble_.server(origin);
  net_.send(node_, target->node_, [target, conn, xid, e] {
    const auto it = target->conns_.find(conn);
    if (it == target->conns_.end()) return;
    ServerConn& sc = it->second;
    if (!sc.head_forwarded || sc.queue.empty() || sc.queue.front().xid != xid) return;
    ZkReply r;
    r.xid = xid;
    r.error = e;
    sc.queue.pop_front();
    sc.head_forwarded = false;
    target->reply(sc, std::move(r));
    target->process_queue(sc);
  });
}

void ZkServer::leader_on_forward(int origin, ConnId conn, int64_t xid, SessionId s,
                                 const Request& r) {
  if (role_ != Role::kLeading) return;  // the origin will lose us and reset its clients
  if (r.kind == OpKind::kCreateSession) {
    const SessionId fresh = ensemble_.next_session_id();
    Txn t =
        prep_tree_.prepare(r, fresh, make_zxid(epoch_, next_counter_++), node_.local_now().to_ms());
    t.origin_server = origin;
    t.origin_conn = conn;
    propose(std::move(t));
    leader_touch(fresh);
    return;
  }
  if (!prep_tree_.has_session(s) || closing_.count(s) != 0) {
    forward_error(origin, conn, xid, ZkError::kSessionExpired);
    return;
  }
  leader_touch(s);
  if (r.kind == OpKind::kSync) {
    syncs_.push_back(PendingSync{origin, conn, xid, last_logged_zxid()});
    check_syncs();
    return;
  }
  if (r.kind == OpKind::kCloseSession) closing_.insert(s);
  Txn t = prep_tree_.prepare(r, s, make_zxid(epoch_, next_counter_++), node_.local_now().to_ms());
  t.origin_server = origin;
  t.origin_conn = conn;
  t.xid = xid;
  propose(std::move(t));
}

void ZkServer::leader_on_revalidate(int origin, ConnId conn, SessionId s) {
  if (role_ != Role::kLeading) return;
  const bool alive = prep_tree_.has_session(s) && closing_.count(s) == 0;
  if (alive) leader_touch(s);
  const Duration timeout = alive ? prep_tree_.sessions().at(s) : Duration::zero();
  ZkServer* target = &ensemble_.server(origin);
  net_.send(node_, target->node_, [target, conn, s, alive, timeout] {
    const auto it = target->conns_.find(conn);
    if (it == target->conns_.end() || it->second.established) return;
    target->finish_connect(it->second, alive ? s : 0, timeout);
  });
}

void ZkServer::leader_touch(SessionId s) {
  if (role_ != Role::kLeading || closing_.count(s) != 0) return;
  const auto it = prep_tree_.sessions().find(s);
  if (it == prep_tree_.sessions().end()) return;
  // ZooKeeper's ExpiryQueue: the deadline rounded up to the next tick.
  const int64_t now = mono_ns();
  const Duration tick = params_.tick;
  last_heard_ns_[s] = now;
  deadline_ns_[s] = ((now + it->second.ns) / tick.ns + 1) * tick.ns;
}

void ZkServer::expire_sessions() {
  const int64_t now = mono_ns();
  std::vector<SessionId> expired;
  for (const auto& [s, deadline] : deadline_ns_) {
    if (deadline <= now && closing_.count(s) == 0) expired.push_back(s);
  }
  for (SessionId s : expired) {
    const auto heard = last_heard_ns_.find(s);
    LOCKSIM_ASSERT_MSG(heard != last_heard_ns_.end(), "a deadline is set with its last packet");
    ensemble_.note_expiry(SessionExpiry{.session = s,
                                        .leader_id = id_,
                                        .last_heard_ns = heard->second,
                                        .deadline_ns = deadline_ns_.at(s),
                                        .at = world_.now()});
    closing_.insert(s);
    deadline_ns_.erase(s);
    Request r;
    r.kind = OpKind::kCloseSession;
    propose(
        prep_tree_.prepare(r, s, make_zxid(epoch_, next_counter_++), node_.local_now().to_ms()));
  }
}

void ZkServer::propose(Txn t) {
  LOCKSIM_ASSERT_MSG(role_ == Role::kLeading, "only the leader proposes");
  LOCKSIM_ASSERT_MSG(epoch_of(t.zxid) == epoch_, "a proposal carries the leader's epoch");
  if (t.type == Txn::Type::kCloseSession) {
    deadline_ns_.erase(t.session);
    last_heard_ns_.erase(t.session);
  }
  prep_tree_.apply(t);
  log_txn(t);
  // One copy the followers' messages share (each follower logs its own copy
  // on arrival), instead of one per message; its box from the thread's free
  // list (sim/local_shared.h).
  const auto proposal = LocalShared<Txn>::make(std::move(t));
  for (auto& [follower, acked] : acked_) {
    ZkServer* f = &ensemble_.server(follower);
    const int64_t epoch = epoch_;
    net_.send(node_, f->node_, [f, epoch, proposal] { f->follower_on_propose(epoch, *proposal); });
  }
  try_commit();
}

void ZkServer::try_commit() {
  // Commits the longest prefix of the log that a quorum has logged.
  Zxid committed = 0;
  while (!log_.empty()) {
    const Zxid z = log_.begin()->first;
    int have = 1;  // ourselves
    for (const auto& [follower, acked] : acked_) {
      const ZkServer& f = ensemble_.server(follower);
      if (acked >= z && f.role_ == Role::kFollowing && f.leader_id_ == id_) ++have;
    }
    if (have < ensemble_.quorum()) break;
    apply_logged(log_.begin());
    committed = z;
  }
  if (committed == 0) return;
  for (auto& [follower, acked] : acked_) {
    ZkServer* f = &ensemble_.server(follower);
    const int64_t epoch = epoch_;
    net_.send(node_, f->node_, [f, epoch, committed] { f->follower_on_commit(epoch, committed); });
  }
  check_syncs();
}

void ZkServer::check_syncs() {
  const Zxid committed = tree_.last_zxid();
  for (auto it = syncs_.begin(); it != syncs_.end();) {
    if (it->target > committed) {
      ++it;
      continue;
    }
    ZkServer* target = &ensemble_.server(it->origin);
    const ConnId conn = it->conn;
    const int64_t xid = it->xid;
    const Zxid point = it->target;
    net_.send(node_, target->node_, [target, conn, xid, point] {
      const auto found = target->conns_.find(conn);
      if (found == target->conns_.end()) return;
      ServerConn& sc = found->second;
      if (!sc.head_forwarded || sc.queue.empty() || sc.queue.front().xid != xid) return;
      sc.sync_target = point;
      target->answer_syncs();
    });
    it = syncs_.erase(it);
  }
}

void ZkServer::leader_on_ack(int from, int64_t epoch, Zxid upto) {
  if (role_ != Role::kLeading || epoch != epoch_) return;
  const auto it = acked_.find(from);
  if (it == acked_.end()) return;
  it->second = std::max(it->second, upto);
  try_commit();
}

void ZkServer::resend_to_followers() {
  // Proposals lost to a dropped message are sent again; the commit point too.
  for (auto& [follower, acked] : acked_) {
    ZkServer* f = &ensemble_.server(follower);
    const int64_t epoch = epoch_;
    for (auto it = log_.upper_bound(acked); it != log_.end(); ++it) {
      const Txn t = it->second;
      net_.send(node_, f->node_, [f, epoch, t] { f->follower_on_propose(epoch, t); });
    }
    const Zxid committed = tree_.last_zxid();
    net_.send(node_, f->node_, [f, epoch, committed] { f->follower_on_commit(epoch, committed); });
  }
}

// ---------------------------------------------------------------- follower

Zxid ZkServer::next_after(Zxid z) const {
  return epoch_of(z) < epoch_ ? make_zxid(epoch_, 1) : z + 1;
}

Zxid ZkServer::contiguous_logged() const {
  Zxid z = tree_.last_zxid();
  // Bounded by the log's size.
  for (auto it = log_.find(next_after(z)); it != log_.end(); it = log_.find(next_after(z))) {
    z = it->first;
  }
  return z;
}

void ZkServer::follower_on_propose(int64_t epoch, const Txn& t) {
  if (role_ != Role::kFollowing || epoch != epoch_) return;
  if (t.zxid > tree_.last_zxid()) log_txn(t);
  send_ack();
  apply_up_to(commit_index_);
}

void ZkServer::follower_on_commit(int64_t epoch, Zxid upto) {
  if (role_ != Role::kFollowing || epoch != epoch_) return;
  commit_index_ = std::max(commit_index_, upto);
  apply_up_to(commit_index_);
}

void ZkServer::apply_up_to(Zxid upto) {
  // Bounded by the log's size: each pass applies and erases one txn.
  for (auto it = log_.find(next_after(tree_.last_zxid())); it != log_.end() && it->first <= upto;
       it = log_.find(next_after(tree_.last_zxid()))) {
    apply_logged(it);
  }
}

void ZkServer::log_txn(const Txn& t) {
  const auto at = log_.lower_bound(t.zxid);
  if (at != log_.end() && at->first == t.zxid) {
    at->second = t;
    return;
  }
  if (log_spares_.empty()) {
    log_.emplace_hint(at, t.zxid, t);
    return;
  }
  auto node = std::move(log_spares_.back());
  log_spares_.pop_back();
  node.key() = t.zxid;
  node.mapped() = t;  // into the strings' kept room
  log_.insert(at, std::move(node));
}

void ZkServer::apply_logged(std::map<Zxid, Txn>::iterator txn) {
  // Out of the log before it is applied, as ZooKeeper's commit takes it.
  auto node = log_.extract(txn);
  apply_committed(node.mapped());
  if (log_spares_.size() < kLogSparesMax) log_spares_.push_back(std::move(node));
}

void ZkServer::send_ack() {
  if (role_ != Role::kFollowing) return;
  const int from = id_;
  const int64_t epoch = epoch_;
  const Zxid upto = contiguous_logged();
  send_to_leader(
      [from, epoch, upto](ZkServer& leader) { leader.leader_on_ack(from, epoch, upto); });
}

}  // namespace locksim::sim::zookeeper
