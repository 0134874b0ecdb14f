#include "sim/zookeeper/zk_client.h"

#include <algorithm>

#include "env/assert.h"
#include "sim/thread_blocks.h"

namespace locksim::sim::zookeeper {

namespace {

// How long a connect() or an operation issued while disconnected waits for a
// connection, in units of the session timeout: long enough for one election
// and a few servers tried, short enough that a client cut off from every
// server gives up and says so.
constexpr int64_t kConnectWaitTimeouts = 1;

}  // namespace

ZkClient::ZkClient(ZkEnsemble& ensemble, Node& node, Rng rng)
    : world_(ensemble.world()),
      net_(ensemble.network()),
      ensemble_(ensemble),
      node_(node),
      rng_(rng),
      fresh_rng_(0),
      requested_(ensemble.params().session_timeout),
      timeout_(ensemble.params().session_timeout) {
  // The C client shuffles its server list; a seeded start does the same.
  list_start_ = 1 + static_cast<int>(rng_.below(static_cast<uint64_t>(ensemble_.size())));
  fresh_rng_ = rng_.split("fresh-handle");
}

ZkClient::~ZkClient() {
  *alive_ = false;
  if (conn_) conn_->closed = true;
}

bool ZkClient::is_current(const std::shared_ptr<Connection>& c) const {
  return conn_ != nullptr && c == conn_ && !crashed_;
}

ZkError ZkClient::dead_error() const {
  if (state_ == ZkSessionState::kExpired) return ZkError::kSessionExpired;
  if (state_ == ZkSessionState::kClosed) return ZkError::kClosing;
  return ZkError::kOk;
}

void ZkClient::set_state(ZkSessionState s) {
  if (s == state_) return;
  state_ = s;
  if (s == ZkSessionState::kConnecting || s == ZkSessionState::kConnected ||
      s == ZkSessionState::kExpired) {
    ZkEvent e;
    e.type = ZkEventType::kSession;
    e.state = s;
    push_event(e);
  }
  wake_state_waiters();
}

void ZkClient::wake_state_waiters() {
  std::vector<std::shared_ptr<Waiter>> waiters;
  waiters.swap(state_waiters_);
  for (auto& w : waiters) world_.signal(*w);
}

void ZkClient::push_event(ZkEvent e) {
  events_.push_back(std::move(e));
  if (event_waiter_) {
    std::shared_ptr<Waiter> w = std::move(event_waiter_);
    event_waiter_.reset();
    world_.signal(*w);
  }
}

void ZkClient::on_process_crash() {
  if (crashed_) return;
  crashed_ = true;
  if (conn_) conn_->closed = true;
  conn_.reset();
  ++timer_generation_;
  // Fibers of the process are being cancelled: nobody waits on these.
  ops_.clear();
  events_.clear();
  event_waiter_.reset();
  state_waiters_.clear();
}

// ---------------------------------------------------------------- session

void ZkClient::start_session() {
  if (crashed_) {  // a restarted process: a fresh handle
    crashed_ = false;
    state_ = ZkSessionState::kNotStarted;
  }
  session_ = 0;
  last_zxid_ = 0;
  timeout_ = requested_;
  data_watches_.clear();
  exist_watches_.clear();
  child_watches_.clear();
  set_state(ZkSessionState::kConnecting);
  // A fresh handle walks its list from the start, as zookeeper_init's does.
  list_next_ = 0;
  failed_in_row_ = 0;
  if (!started_) {
    started_ = true;
    // The process connects at a time of its own: how its packets fall
    // against the leader's tick (how much its deadline is rounded up) then
    // differs from client to client and from seed to seed.
    const Duration delay{fresh_rng_.between(0, ensemble_.params().tick.ns - 1)};
    first_attempt_at_ = world_.now() + delay;
    attempt_next(delay);
    return;
  }
  // A new handle shuffles its list anew.
  list_start_ = 1 + static_cast<int>(fresh_rng_.below(static_cast<uint64_t>(ensemble_.size())));
  attempt_next(Duration::zero());
}

int ZkClient::take_next_server() {
  // The server at the cursor, wrapping at the end of the list.
  const int n = ensemble_.size();
  if (list_next_ >= n) list_next_ = 0;
  const int index = list_next_++;
  LOCKSIM_ASSERT(list_start_ >= 1 && list_start_ <= n);
  return (list_start_ - 1 + index) % n + 1;
}

void ZkClient::attempt_next(Duration after) {
  LOCKSIM_ASSERT_MSG(after >= Duration::zero(), "a wait is never negative");
  if (after == Duration::zero()) {
    attempt(take_next_server());
    return;
  }
  // A later state change (closed, crashed, a new session) bumps the
  // generation and so cancels this attempt.
  const uint64_t generation = ++timer_generation_;
  std::weak_ptr<bool> alive = alive_;
  world_.after(after, [this, alive, generation] {
    if (alive.expired() || !*alive.lock()) return;
    node_.deliver([this, alive, generation] {
      if (alive.expired() || !*alive.lock()) return;
      if (generation != timer_generation_ || crashed_ || node_.crashed()) return;
      if (state_ == ZkSessionState::kConnecting && conn_ == nullptr) attempt(take_next_server());
    });
  });
}

void ZkClient::attempt(int server_id) {
  LOCKSIM_ASSERT_MSG(state_ == ZkSessionState::kConnecting, "attempts happen while connecting");
  ZkServer& server = ensemble_.server(server_id);
  auto c = std::make_shared<Connection>();
  c->id = ensemble_.next_conn_id();
  c->client_node = &node_;
  c->server_node = &server.node();
  c->client = this;
  c->server = &server;
  conn_ = c;
  server_id_ = server_id;
  ConnectRequest req;
  req.session = session_;
  req.last_zxid_seen = last_zxid_;
  req.requested_timeout = requested_;
  req.data_watches.assign(data_watches_.begin(), data_watches_.end());
  req.exist_watches.assign(exist_watches_.begin(), exist_watches_.end());
  req.child_watches.assign(child_watches_.begin(), child_watches_.end());
  attempt_started_ = world_.now();
  last_recv_ = world_.now();
  if (server.node().crashed()) {
    refuse(c);
  } else {
    send_up([c, req] { c->server->on_connect(c, req); });
  }
  schedule_timer();
}

void ZkClient::refuse(const std::shared_ptr<Connection>& c) {
  // Nobody listens on a crashed process's port: its kernel answers the SYN
  // with a reset, one round trip later, if the link lets both through (a
  // cut link is silent, and the attempt times out after 2T/3).
  if (!net_.connected(node_, *c->server_node)) return;
  std::weak_ptr<bool> alive = alive_;
  world_.after(net_.round_trip_base(node_, *c->server_node), [this, alive, c] {
    if (alive.expired() || !*alive.lock()) return;
    node_.deliver([this, alive, c] {
      if (!alive.expired() && *alive.lock()) on_reset(c);
    });
  });
}

void ZkClient::send_up(Callback message) {
  LOCKSIM_ASSERT(conn_ != nullptr);
  last_send_ = world_.now();
  conn_->up.send(net_, node_, *conn_->server_node, std::move(message), conn_);
}

void ZkClient::on_connect_response(const std::shared_ptr<Connection>& c, const ConnectResponse& r) {
  if (!is_current(c)) return;
  last_recv_ = world_.now();
  if (r.expired) {
    conn_.reset();
    server_id_ = 0;
    ++timer_generation_;
    fail_all(ZkError::kSessionExpired);
    set_state(ZkSessionState::kExpired);
    return;
  }
  LOCKSIM_ASSERT_MSG(session_ == 0 || session_ == r.session, "a reconnect keeps the session");
  LOCKSIM_ASSERT_MSG(r.timeout >= ensemble_.params().min_session_timeout() &&
                         r.timeout <= ensemble_.params().max_session_timeout(),
                     "the server clamps the timeout");
  if (session_ == 0) sessions_.push_back(r.session);
  session_ = r.session;
  timeout_ = r.timeout;
  failed_in_row_ = 0;
  set_state(ZkSessionState::kConnected);
  for (auto& op : ops_) {
    if (!op->sent) send_op(op);
  }
  schedule_timer();
}

void ZkClient::connection_lost() {
  if (conn_) {
    conn_->closed = true;
    std::shared_ptr<Connection> old = conn_;
    ZkServer* server = old->server;
    // The FIN reaches the server if the link lets it; harmless if not.
    net_.send(node_, server->node(), [server, id = old->id] { server->on_client_gone(id); });
  }
  conn_.reset();
  server_id_ = 0;
  fail_all(ZkError::kConnectionLoss);
  set_state(ZkSessionState::kConnecting);
  // The next server at once; a back-off only once the whole list failed in
  // a row, so a client facing no quorum does not spin (a reset or a refusal
  // comes back within a round trip).
  ++failed_in_row_;
  const bool whole_list = failed_in_row_ >= ensemble_.size();
  if (whole_list) failed_in_row_ = 0;
  attempt_next(whole_list ? ensemble_.params().reconnect_pause : Duration::zero());
}

void ZkClient::on_reset(const std::shared_ptr<Connection>& c) {
  if (!is_current(c)) return;
  connection_lost();
}

void ZkClient::on_ping_reply(const std::shared_ptr<Connection>& c) {
  if (!is_current(c)) return;
  last_recv_ = world_.now();
}

void ZkClient::fail_all(ZkError e) {
  std::deque<std::shared_ptr<Op>> ops;
  ops.swap(ops_);
  for (auto& op : ops) {
    op->reply.error = e;
    world_.signal(op->waiter);
  }
}

// ---------------------------------------------------------------- timers

void ZkClient::schedule_timer() {
  const uint64_t generation = ++timer_generation_;
  Duration wait;
  if (state_ == ZkSessionState::kConnected) {
    const Duration ping_at = (last_send_ + timeout_ / 3) - world_.now();
    const Duration dead_at = (last_recv_ + timeout_ * 2 / 3) - world_.now();
    wait = std::max(std::min(ping_at, dead_at), Duration::zero());
  } else {
    wait = std::max((attempt_started_ + timeout_ * 2 / 3) - world_.now(), Duration::zero());
  }
  std::weak_ptr<bool> alive = alive_;
  world_.after(wait, [this, alive, generation] {
    if (alive.expired() || !*alive.lock()) return;
    // The library's thread runs in the process: frozen while it is paused.
    node_.deliver([this, alive, generation] {
      if (alive.expired() || !*alive.lock()) return;
      on_timer(generation);
    });
  });
}

void ZkClient::on_timer(uint64_t generation) {
  if (node_.crashed()) on_process_crash();
  if (generation != timer_generation_ || crashed_ || conn_ == nullptr) return;
  const TimePoint now = world_.now();
  if (state_ == ZkSessionState::kConnected) {
    if (now - last_recv_ >= timeout_ * 2 / 3) {
      connection_lost();
      return;
    }
    if (now - last_send_ >= timeout_ / 3) {
      std::shared_ptr<Connection> c = conn_;
      send_up([c] { c->server->on_ping(c); });
    }
    schedule_timer();
    return;
  }
  if (state_ == ZkSessionState::kConnecting && now - attempt_started_ >= timeout_ * 2 / 3) {
    connection_lost();
    return;
  }
  schedule_timer();
}

// ---------------------------------------------------------------- calls

ZkError ZkClient::connect() {
  if (crashed_ || state_ == ZkSessionState::kNotStarted) start_session();
  if (dead_error() != ZkError::kOk) return dead_error();
  // Counted from the process's first attempt, which may still be ahead.
  const TimePoint deadline =
      std::max(world_.now(), first_attempt_at_) + timeout_ * kConnectWaitTimeouts;
  // Each wake is a state change or the deadline: bounded by the deadline.
  while (state_ == ZkSessionState::kConnecting && world_.now() < deadline) {
    auto w = std::make_shared<Waiter>();
    state_waiters_.push_back(w);
    world_.at(deadline, [this, w, alive = std::weak_ptr<bool>(alive_)] {
      if (!alive.expired() && *alive.lock()) world_.signal(*w);
    });
    world_.block(*w);
  }
  if (state_ == ZkSessionState::kConnected) return ZkError::kOk;
  if (dead_error() != ZkError::kOk) return dead_error();
  return ZkError::kOperationTimeout;
}

ZkError ZkClient::new_session() {
  if (state_ == ZkSessionState::kConnected && conn_ != nullptr) close();
  if (conn_) conn_->closed = true;
  conn_.reset();
  ++timer_generation_;
  fail_all(ZkError::kClosing);
  events_.clear();
  state_ = ZkSessionState::kNotStarted;
  return connect();
}

void ZkClient::close() {
  if (state_ == ZkSessionState::kConnected && !crashed_) {
    Request r;
    r.kind = OpKind::kCloseSession;
    call(r);  // best effort: an unanswered close still ends the handle
  }
  if (conn_) conn_->closed = true;
  conn_.reset();
  ++timer_generation_;
  fail_all(ZkError::kClosing);
  set_state(ZkSessionState::kClosed);
}

void ZkClient::send_op(const std::shared_ptr<Op>& op) {
  op->sent = true;
  ++requests_sent_;
  std::shared_ptr<Connection> c = conn_;
  const int64_t xid = op->xid;
  // The message, and the server after it, read the op's request, which
  // nobody changes once it is made, instead of copies of it.
  send_up([c, xid, r = std::shared_ptr<const Request>(op, &op->request)] {
    c->server->on_request(c, xid, r);
  });
}

ZkReply ZkClient::call(Request r) {
  if (crashed_ || state_ == ZkSessionState::kNotStarted) start_session();
  ZkReply dead;
  dead.error = dead_error();
  if (dead.error != ZkError::kOk) return dead;
  // The op and its count in one block from the thread's free list: a call
  // made one and freed it.
  auto op = std::allocate_shared<Op>(ThreadBlockAllocator<Op>());
  op->xid = next_xid_++;
  op->request = std::move(r);
  ops_.push_back(op);
  if (state_ == ZkSessionState::kConnected && conn_ != nullptr) send_op(op);
  world_.block(op->waiter);
  // Nobody reads the reply after the wake-up: on_reply and fail_all take the
  // op off ops_ before they signal.
  return std::move(op->reply);
}

void ZkClient::on_reply(const std::shared_ptr<Connection>& c, ZkReply&& r) {
  if (!is_current(c)) return;
  last_recv_ = world_.now();
  last_zxid_ = std::max(last_zxid_, r.zxid);
  LOCKSIM_ASSERT_MSG(!ops_.empty() && ops_.front()->sent && ops_.front()->xid == r.xid,
                     "replies come in request order");
  std::shared_ptr<Op> op = ops_.front();
  ops_.pop_front();
  note_watch(op->request, r);
  op->reply = std::move(r);
  world_.signal(op->waiter);
}

void ZkClient::note_watch(const Request& r, const ZkReply& reply) {
  if (!r.watch) return;
  if (r.kind == OpKind::kExists) {
    (reply.error == ZkError::kOk ? data_watches_ : exist_watches_).insert(r.path);
  } else if (r.kind == OpKind::kGetData && reply.error == ZkError::kOk) {
    data_watches_.insert(r.path);
  } else if (r.kind == OpKind::kGetChildren && reply.error == ZkError::kOk) {
    child_watches_.insert(r.path);
  }
}

void ZkClient::on_watch(const std::shared_ptr<Connection>& c, const ZkEvent& e) {
  if (!is_current(c)) return;
  last_recv_ = world_.now();
  // One-shot: the watch that fired is gone from the registry too.
  switch (e.type) {
    case ZkEventType::kCreated:
    case ZkEventType::kDataChanged:
      data_watches_.erase(e.path);
      exist_watches_.erase(e.path);
      break;
    case ZkEventType::kDeleted:
      data_watches_.erase(e.path);
      exist_watches_.erase(e.path);
      child_watches_.erase(e.path);
      break;
    case ZkEventType::kChildrenChanged:
      child_watches_.erase(e.path);
      break;
    case ZkEventType::kSession:
      break;
  }
  push_event(e);
}

std::optional<ZkEvent> ZkClient::next_event(Duration timeout) {
  LOCKSIM_ASSERT_MSG(timeout >= Duration::zero(), "a wait is never negative");
  if (events_.empty() && timeout > Duration::zero()) {
    auto w = std::make_shared<Waiter>();
    event_waiter_ = w;
    world_.after(timeout, [this, w, alive = std::weak_ptr<bool>(alive_)] {
      if (!alive.expired() && *alive.lock()) world_.signal(*w);
    });
    world_.block(*w);
    if (event_waiter_ == w) event_waiter_.reset();
  }
  if (events_.empty()) return std::nullopt;
  ZkEvent e = std::move(events_.front());
  events_.pop_front();
  return e;
}

ZkCreateResult ZkClient::create(const std::string& path, const std::string& data,
                                ZkCreateFlags flags) {
  Request r;
  r.kind = OpKind::kCreate;
  r.path = path;
  r.data = data;
  r.flags = flags;
  const ZkReply reply = call(std::move(r));
  return {reply.error, reply.path, reply.stat};
}

ZkError ZkClient::remove(const std::string& path, int32_t version) {
  Request r;
  r.kind = OpKind::kDelete;
  r.path = path;
  r.version = version;
  return call(std::move(r)).error;
}

ZkStatResult ZkClient::exists(const std::string& path, bool watch) {
  Request r;
  r.kind = OpKind::kExists;
  r.path = path;
  r.watch = watch;
  const ZkReply reply = call(std::move(r));
  return {reply.error, reply.stat};
}

ZkChildrenResult ZkClient::get_children(const std::string& path, bool watch) {
  Request r;
  r.kind = OpKind::kGetChildren;
  r.path = path;
  r.watch = watch;
  ZkReply reply = call(std::move(r));
  return {reply.error, std::move(reply.children), reply.stat};
}

ZkDataResult ZkClient::get_data(const std::string& path, bool watch) {
  Request r;
  r.kind = OpKind::kGetData;
  r.path = path;
  r.watch = watch;
  ZkReply reply = call(std::move(r));
  return {reply.error, std::move(reply.data), reply.stat};
}

ZkStatResult ZkClient::set_data(const std::string& path, const std::string& data, int32_t version) {
  Request r;
  r.kind = OpKind::kSetData;
  r.path = path;
  r.data = data;
  r.version = version;
  const ZkReply reply = call(std::move(r));
  return {reply.error, reply.stat};
}

ZkError ZkClient::sync(const std::string& path) {
  Request r;
  r.kind = OpKind::kSync;
  r.path = path;
  return call(std::move(r)).error;
}

}  // namespace locksim::sim::zookeeper
