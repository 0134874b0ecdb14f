#include "sim/zookeeper/zk_server.h"

#include <algorithm>

#include "env/argv_pool.h"
#include "env/assert.h"
#include "sim/zookeeper/ensemble.h"
#include "sim/zookeeper/zk_client.h"

namespace locksim::sim::zookeeper {

ZkServer::ZkServer(World& world, Network& net, ZkEnsemble& ensemble, int id, const ZkParams& params,
                   Duration tick_phase)
    : world_(world),
      net_(net),
      ensemble_(ensemble),
      id_(id),
      params_(params),
      node_(world, "zk-" + std::to_string(id)),
      mono_base_ns_(tick_phase.ns) {
  LOCKSIM_ASSERT_MSG(tick_phase >= Duration::zero() && tick_phase < params_.tick,
                     "a tick phase lies within one tick");
  node_.on_crash = [this] { on_crash(); };
  node_.on_restart = [this] { on_restart(); };
  schedule_session_check();
}

void ZkServer::schedule_session_check() {
  // ZooKeeper's SessionTracker sleeps until the next bucket, a multiple of
  // tick on the monotonic clock, and expires what it holds then.
  const int64_t now = mono_ns();
  const int64_t tick = params_.tick.ns;
  const int64_t wait_mono = (now / tick + 1) * tick - now;
  // In true time at the current drift, rounded up so the clock has reached
  // the bucket when the check runs (a drift change meanwhile: one more check).
  const int64_t rate = 1'000'000 + mono_ppm_;
  LOCKSIM_ASSERT_MSG(rate > 0, "drift is validated to (-1e6, 1e6) ppm");
  // 64 bits suffice: the tick is at most 60 s (ZkParams::kTickMax), so the
  // product stays below 6e16, and a 128-bit division would be a call into libgcc.
  LOCKSIM_ASSERT(wait_mono > 0 && wait_mono <= ZkParams::kTickMax.ns);
  const int64_t wait_true = (wait_mono * 1'000'000 + rate - 1) / rate;
  world_.after(Duration{wait_true}, [this] {
    schedule_session_check();
    // A paused server's thread is frozen: it checks once, when it resumes.
    if (session_check_queued_ || node_.crashed()) return;
    session_check_queued_ = true;
    node_.deliver([this] {
      session_check_queued_ = false;
      if (role_ == Role::kLeading) expire_sessions();
    });
  });
}

Zxid ZkServer::last_logged_zxid() const {
  return log_.empty() ? tree_.last_zxid() : std::max(tree_.last_zxid(), log_.rbegin()->first);
}

int64_t ZkServer::mono_ns() {
  // Rebased whenever the node's drift changed since the last read, so drift
  // counts from (about) when it was set; jumps never reach this clock. Its
  // origin (mono_base_ns_ at true time zero) is the server's tick phase.
  const TimePoint now = world_.now();
  const int64_t mono =
      mono_base_ns_ + mul_div((now - mono_base_true_).ns, 1'000'000 + mono_ppm_, 1'000'000);
  if (node_.clock().drift_ppm() != mono_ppm_) {
    mono_base_true_ = now;
    mono_base_ns_ = mono;
    mono_ppm_ = node_.clock().drift_ppm();
  }
  return mono;
}

std::optional<int64_t> ZkServer::session_deadline_ns(SessionId s) const {
  const auto it = deadline_ns_.find(s);
  if (role_ != Role::kLeading || it == deadline_ns_.end()) return std::nullopt;
  return it->second;
}

std::optional<int64_t> ZkServer::session_last_heard_ns(SessionId s) const {
  const auto it = last_heard_ns_.find(s);
  if (role_ != Role::kLeading || it == last_heard_ns_.end()) return std::nullopt;
  return it->second;
}

// ---------------------------------------------------------------- roles

void ZkServer::lead(int64_t epoch) {
  LOCKSIM_ASSERT_MSG(role_ == Role::kLooking, "only a LOOKING server is elected");
  LOCKSIM_ASSERT_MSG(epoch > epoch_, "epochs grow");
  // ZAB: the new leader's history becomes the ensemble's.
  for (const auto& [zxid, txn] : log_) apply_committed(txn);
  log_.clear();
  role_ = Role::kLeading;
  epoch_ = epoch;
  leader_id_ = id_;
  role_since_ = world_.now();
  role_changed();
  prep_tree_ = tree_;
  next_counter_ = 1;
  acked_.clear();
  closing_.clear();
  syncs_.clear();
  deadline_ns_.clear();
  last_heard_ns_.clear();
  // Every restored session gets a fresh T from now.
  for (const auto& [session, timeout] : tree_.sessions()) leader_touch(session);
}

void ZkServer::follow(ZkServer& leader) {
  LOCKSIM_ASSERT_MSG(role_ == Role::kLooking && leader.role_ == Role::kLeading,
                     "a LOOKING server joins a leader");
  // SNAP: the leader's applied tree and its outstanding proposals replace
  // ours; anything only we had logged is gone, as ZooKeeper's TRUNC does.
  tree_ = leader.tree_;
  log_ = leader.log_;
  commit_index_ = tree_.last_zxid();
  role_ = Role::kFollowing;
  epoch_ = leader.epoch_;
  leader_id_ = leader.id_;
  role_since_ = world_.now();
  role_changed();  // the role, and the tree taken from the leader
  leader.acked_[id_] = contiguous_logged();
}

void ZkServer::stop_serving() {
  // Resets go out even from a crashed node: the kernel answers for it.
  std::vector<ConnId> ids;
  for (const auto& [id, sc] : conns_) ids.push_back(id);
  for (ConnId id : ids) close_conn(id, true);
  conns_.clear();
  session_conn_.clear();
  watches_ = WatchManager{};
  touched_.clear();
  role_ = Role::kLooking;
  leader_id_ = 0;
  role_since_ = world_.now();
  role_changed();
  acked_.clear();
  deadline_ns_.clear();
  last_heard_ns_.clear();
  closing_.clear();
  syncs_.clear();
}

void ZkServer::on_crash() {
  stop_serving();
  // What survives: tree_ and log_ (fsynced). What does not: the rest, the
  // session check a paused node had queued among it.
  commit_index_ = tree_.last_zxid();
  session_check_queued_ = false;
}

void ZkServer::on_restart() {
  role_ = Role::kLooking;
  role_since_ = world_.now();
  role_changed();
}

void ZkServer::periodic() {
  if (!node_.running()) return;
  if (role_ == Role::kFollowing) {
    if (!touched_.empty()) {
      // The batch in a pooled vector (env/argv_pool.h), given back once read.
      std::vector<SessionId> batch = argv_pool::take<SessionId>(touched_.size());
      std::copy(touched_.begin(), touched_.end(), batch.begin());
      touched_.clear();
      const int64_t epoch = epoch_;
      send_to_leader([batch = std::move(batch), epoch](ZkServer& leader) mutable {
        if (leader.role_ == Role::kLeading && leader.epoch_ == epoch) {
          for (SessionId s : batch) leader.leader_touch(s);
        }
        argv_pool::give_back(std::move(batch));
      });
    }
    send_ack();
  } else if (role_ == Role::kLeading) {
    resend_to_followers();
  }
}

// ---------------------------------------------------------------- clients

void ZkServer::send_down(const std::shared_ptr<Connection>& c, Callback message) {
  if (c->closed) return;
  c->down.send(net_, node_, *c->client_node, std::move(message), c);
}

void ZkServer::reset(const std::shared_ptr<Connection>& c) {
  send_down(c, [c] { c->client->on_reset(c); });
  c->closed = true;
}

void ZkServer::close_conn(ConnId id, bool send_reset) {
  const auto it = conns_.find(id);
  if (it == conns_.end()) return;
  std::shared_ptr<Connection> c = it->second.conn;
  const SessionId s = it->second.session;
  const auto owner = session_conn_.find(s);
  if (owner != session_conn_.end() && owner->second == id) session_conn_.erase(owner);
  watches_.remove_connection(id);
  conns_.erase(it);
  if (send_reset) reset(c);
}

void ZkServer::touch(SessionId s) {
  if (s == 0) return;
  if (role_ == Role::kLeading) {
    leader_touch(s);
  } else {
    const auto at = std::lower_bound(touched_.begin(), touched_.end(), s);
    if (at == touched_.end() || *at != s) touched_.insert(at, s);
  }
}

void ZkServer::on_client_gone(ConnId c) {
  close_conn(c, false);
}

void ZkServer::on_connect(const std::shared_ptr<Connection>& c, const ConnectRequest& req) {
  const bool serving = role_ != Role::kLooking;
  // ZooKeeper refuses a client that has seen a newer state than this server
  // has: reading here could take it back in time.
  if (!serving || req.last_zxid_seen > tree_.last_zxid() || c->closed) {
    reset(c);
    return;
  }
  ServerConn& sc = conns_[c->id];
  sc.conn = c;
  sc.hello = req;
  const Duration negotiated = params_.negotiate(req.requested_timeout);
  const ConnId conn = c->id;
  const int origin = id_;
  if (req.session == 0) {
    Request r;
    r.kind = OpKind::kCreateSession;
    r.session_timeout = negotiated;
    send_to_leader([origin, conn, r](ZkServer& leader) {
      leader.leader_on_forward(origin, conn, /*xid=*/0, /*session=*/0, r);
    });
  } else {
    const SessionId s = req.session;
    send_to_leader(
        [origin, conn, s](ZkServer& leader) { leader.leader_on_revalidate(origin, conn, s); });
  }
}

void ZkServer::finish_connect(ServerConn& sc, SessionId s, Duration timeout) {
  std::shared_ptr<Connection> c = sc.conn;
  if (s == 0) {  // expired
    ConnectResponse r;
    r.expired = true;
    send_down(c, [c, r] { c->client->on_connect_response(c, r); });
    close_conn(c->id, false);
    c->closed = true;
    return;
  }
  // A session lives on one connection per server: an older one is stale.
  const auto old = session_conn_.find(s);
  if (old != session_conn_.end() && old->second != c->id) close_conn(old->second, true);
  sc.session = s;
  sc.established = true;
  session_conn_[s] = c->id;
  ConnectResponse r;
  r.session = s;
  r.timeout = timeout;
  send_down(c, [c, r] { c->client->on_connect_response(c, r); });
  register_watches(sc);
  sc.hello = ConnectRequest{};
}

void ZkServer::register_watches(ServerConn& sc) {
  // ZooKeeper's setWatches: fire what the client missed since the last zxid
  // it saw, register the rest.
  const Zxid seen = sc.hello.last_zxid_seen;
  std::shared_ptr<Connection> c = sc.conn;
  auto fire = [this, &c](ZkEventType type, const std::string& path) {
    ZkEvent e;
    e.type = type;
    e.path = path;
    send_down(c, [c, e] { c->client->on_watch(c, e); });
  };
  for (const std::string& path : sc.hello.data_watches) {
    const ZkStatResult st = tree_.exists(path);
    if (st.error != ZkError::kOk) {
      fire(ZkEventType::kDeleted, path);
    } else if (st.stat.mzxid > seen) {
      fire(ZkEventType::kDataChanged, path);
    } else {
      watches_.add_data_watch(path, c->id);
    }
  }
  for (const std::string& path : sc.hello.exist_watches) {
    if (tree_.exists(path).error == ZkError::kOk) {
      fire(ZkEventType::kCreated, path);
    } else {
      watches_.add_data_watch(path, c->id);
    }
  }
  for (const std::string& path : sc.hello.child_watches) {
    const ZkStatResult st = tree_.exists(path);
    if (st.error != ZkError::kOk) {
      fire(ZkEventType::kDeleted, path);
    } else if (st.stat.pzxid > seen) {
      fire(ZkEventType::kChildrenChanged, path);
    } else {
      watches_.add_child_watch(path, c->id);
    }
  }
}

void ZkServer::on_request(const std::shared_ptr<Connection>& c, int64_t xid,
                          std::shared_ptr<const Request> r) {
  LOCKSIM_ASSERT(r != nullptr);
  const auto it = conns_.find(c->id);
  if (it == conns_.end() || !it->second.established || role_ == Role::kLooking) {
    reset(c);  // a connection this process does not know: RST
    return;
  }
  ++requests_;
  touch(it->second.session);
  it->second.queue.push_back(Pending{xid, std::move(r)});
  process_queue(it->second);
}

void ZkServer::on_ping(const std::shared_ptr<Connection>& c) {
  const auto it = conns_.find(c->id);
  if (it == conns_.end() || !it->second.established || role_ == Role::kLooking) {
    reset(c);
    return;
  }
  touch(it->second.session);
  send_down(c, [c] { c->client->on_ping_reply(c); });
}

void ZkServer::process_queue(ServerConn& sc) {
  // Bounded by the queue's length: each pass answers a read or stops.
  while (!sc.queue.empty()) {
    Pending& head = sc.queue.front();
    if (!is_write(head.request->kind) && head.request->kind != OpKind::kSync) {
      const Pending p = std::move(head);
      sc.queue.pop_front();
      answer_read(sc, p);
      continue;
    }
    if (sc.head_forwarded) return;
    sc.head_forwarded = true;
    const int origin = id_;
    const ConnId conn = sc.conn->id;
    const SessionId s = sc.session;
    const int64_t xid = head.xid;
    send_to_leader([origin, conn, s, xid, r = head.request](ZkServer& leader) {
      leader.leader_on_forward(origin, conn, xid, s, *r);
    });
    return;
  }
}

void ZkServer::answer_read(ServerConn& sc, const Pending& p) {
  ZkReply r;
  r.xid = p.xid;
  const Request& request = *p.request;
  const std::string& path = request.path;
  const ConnId conn = sc.conn->id;
  switch (request.kind) {
    case OpKind::kExists: {
      const ZkStatResult st = tree_.exists(path);
      r.error = st.error;
      r.stat = st.stat;
      if (request.watch) watches_.add_data_watch(path, conn);
      break;
    }
    case OpKind::kGetChildren: {
      ZkChildrenResult ch = tree_.children(path);
      r.error = ch.error;
      r.children = std::move(ch.children);
      r.stat = ch.stat;
      if (request.watch && r.error == ZkError::kOk) watches_.add_child_watch(path, conn);
      break;
    }
    case OpKind::kGetData: {
      ZkDataResult d = tree_.data(path);
      r.error = d.error;
      r.data = std::move(d.data);
      r.stat = d.stat;
      if (request.watch && r.error == ZkError::kOk) watches_.add_data_watch(path, conn);
      break;
    }
    default:
      LOCKSIM_ASSERT_MSG(false, "answer_read is given reads only");
  }
  reply(sc, std::move(r));
}

void ZkServer::reply(ServerConn& sc, ZkReply r) {
  r.zxid = tree_.last_zxid();
  std::shared_ptr<Connection> c = sc.conn;
  // Moved out on arrival: a message runs once.
  send_down(c, [c, r = std::move(r)]() mutable { c->client->on_reply(c, std::move(r)); });
}

// ---------------------------------------------------------------- applying

void ZkServer::apply_committed(const Txn& t) {
  const TxnResult result = tree_.apply(t);
  if (role_ == Role::kLeading) ++answer_changes_;
  // Watches first: their notifications go down each connection before the
  // reply that route_result sends.
  for (const ChangeEvent& change : result.events) {
    for (auto& [conn, event] : watches_.trigger(change)) {
      const auto it = conns_.find(conn);
      if (it == conns_.end()) continue;
      std::shared_ptr<Connection> c = it->second.conn;
      send_down(c, [c, e = event] { c->client->on_watch(c, e); });
    }
  }
  route_result(t, result);
  answer_syncs();
}

void ZkServer::route_result(const Txn& t, const TxnResult& result) {
  if (t.type == Txn::Type::kCreateSession) {
    const auto it = conns_.find(t.origin_conn);
    if (t.origin_server == id_ && it != conns_.end() && !it->second.established) {
      finish_connect(it->second, t.session, t.session_timeout);
    }
    return;
  }
  const bool mine = t.origin_server == id_ && conns_.count(t.origin_conn) != 0;
  if (mine) {
    ServerConn& sc = conns_.at(t.origin_conn);
    if (sc.head_forwarded && !sc.queue.empty() && sc.queue.front().xid == t.xid) {
      ZkReply r;
      r.xid = t.xid;
      r.error = result.error;
      r.path = result.path;
      r.stat = result.stat;
      sc.queue.pop_front();
      sc.head_forwarded = false;
      reply(sc, std::move(r));
      process_queue(sc);
    }
  }
  if (t.type == Txn::Type::kCloseSession) {
    // The session is over: its connection here goes (after the reply to its
    // own close, if that is what this was).
    const auto owner = session_conn_.find(t.session);
    if (owner != session_conn_.end()) close_conn(owner->second, true);
  }
}

void ZkServer::answer_syncs() {
  for (auto& [id, sc] : conns_) {
    if (!sc.sync_target || tree_.last_zxid() < *sc.sync_target) continue;
    LOCKSIM_ASSERT_MSG(sc.head_forwarded && !sc.queue.empty(), "a sync target belongs to the head");
    ZkReply r;
    r.xid = sc.queue.front().xid;
    sc.queue.pop_front();
    sc.head_forwarded = false;
    sc.sync_target.reset();
    reply(sc, std::move(r));
    process_queue(sc);
  }
}

}  // namespace locksim::sim::zookeeper
