// The simulated ZooKeeper client library: one handle (a session) of one
// client process, behind the ZkConnection seam.
//
// It behaves as the C client does (the one live mode uses):
//   - connects to one server at a time, asking for the configured session
//     timeout T and adopting the negotiated one; the process's first
//     connect waits a seeded draw in [0, tick), so clients start at times of
//     their own against the servers' ticks;
//   - walks its server list: zk-1..zk-N rotated to a seeded start (the C
//     client shuffles it). After a lost or failed connection it connects to
//     the next server at once, and backs off reconnect_pause only once every
//     server of the list failed since it last connected ("Delaying connection
//     after exhaustively trying all servers", zookeeper.c). So a client that
//     resumes from a pause past 2T/3 reconnects within a round trip;
//   - pings after T/3 without sending anything; declares the connection dead
//     after 2T/3 without hearing anything (a SUSPENDED session: event
//     kConnecting, every outstanding call fails with CONNECTIONLOSS) and
//     tries the next server; a reset does the same at once, and a connect to
//     a crashed server is refused one round trip later (its kernel answers);
//   - learns that its session expired only when it reconnects: the server
//     answers "expired", the handle is dead (every call: SESSIONEXPIRED)
//     until new_session();
//   - keeps a registry of its one-shot watches and re-registers them on
//     reconnecting within the same session, with the last zxid it saw, so the
//     server fires the events it missed;
//   - its timers run on the client's node: a paused process neither pings
//     nor notices anything until it resumes, then handles what queued up.
// A crashed process's handle dies with it (on_process_crash(): the lead's
// runner calls it from the node's on_crash; a timer also notices); the
// restarted process's first call opens a fresh session.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "env/assert.h"
#include "env/zk_connection.h"
#include "sim/node.h"
#include "sim/rng.h"
#include "sim/world.h"
#include "sim/zookeeper/ensemble.h"
#include "sim/zookeeper/wire.h"

namespace locksim::sim::zookeeper {

class ZkClient : public ZkConnection {
 public:
  // A handle for the process on `node`. Does not connect until first used.
  ZkClient(ZkEnsemble& ensemble, Node& node, Rng rng);
  ~ZkClient() override;

  ZkError connect() override;
  ZkError new_session() override;
  void close() override;
  ZkCreateResult create(const std::string& path, const std::string& data,
                        ZkCreateFlags flags) override;
  ZkError remove(const std::string& path, int32_t version) override;
  ZkStatResult exists(const std::string& path, bool watch) override;
  ZkChildrenResult get_children(const std::string& path, bool watch) override;
  ZkDataResult get_data(const std::string& path, bool watch) override;
  ZkStatResult set_data(const std::string& path, const std::string& data, int32_t version) override;
  ZkError sync(const std::string& path) override;
  std::optional<ZkEvent> next_event(Duration timeout) override;
  ZkSessionState state() const override { return state_; }
  int64_t session_id() const override { return session_; }
  Duration negotiated_timeout() const override { return timeout_; }
  std::string server_name() const override { return "zk"; }

  // The session timeout this handle asks for from its next session on
  // (default: the deployment's). For tests of the negotiation.
  void request_timeout(Duration t) { requested_ = t; }
  // Starts the server list at `first_id` instead of the seeded position (a
  // test's zoo_deterministic_conn_order). Before the first connect only.
  void start_list_at(int first_id) {
    LOCKSIM_ASSERT_MSG(first_id >= 1 && first_id <= ensemble_.size(), "server ids are 1..N");
    LOCKSIM_ASSERT_MSG(state_ == ZkSessionState::kNotStarted, "before the first connect");
    list_start_ = first_id;
  }

  // The process died: the handle dies with it, without a word to the servers
  // (its session lives on until the ensemble expires it).
  void on_process_crash();

  // --- From the connection, run at the client node in order ---
  void on_connect_response(const std::shared_ptr<Connection>& c, const ConnectResponse& r);
  void on_reply(const std::shared_ptr<Connection>& c, ZkReply&& r);
  void on_watch(const std::shared_ptr<Connection>& c, const ZkEvent& e);
  void on_ping_reply(const std::shared_ptr<Connection>& c);
  void on_reset(const std::shared_ptr<Connection>& c);

  // For reports and tests: true time the client last heard from its server,
  // and the server it is connected to (0: none).
  TimePoint last_heard() const { return last_recv_; }
  int server_id() const { return server_id_; }
  uint64_t requests_sent() const { return requests_sent_; }
  // Every session this handle was granted, in order (a report names the
  // client of an expired session by it).
  const std::vector<SessionId>& sessions() const { return sessions_; }

 private:
  struct Op {
    int64_t xid = 0;
    Request request;
    bool sent = false;
    Waiter waiter;
    ZkReply reply;
  };

  ZkReply call(Request r);
  void start_session();
  int take_next_server();
  void attempt_next(Duration after);
  void attempt(int server_id);
  void refuse(const std::shared_ptr<Connection>& c);
  void send_up(Callback message);
  void send_op(const std::shared_ptr<Op>& op);
  void connection_lost();
  void set_state(ZkSessionState s);
  void fail_all(ZkError e);
  void schedule_timer();
  void on_timer(uint64_t generation);
  void wake_state_waiters();
  void push_event(ZkEvent e);
  void note_watch(const Request& r, const ZkReply& reply);
  bool is_current(const std::shared_ptr<Connection>& c) const;
  ZkError dead_error() const;

  World& world_;
  Network& net_;
  ZkEnsemble& ensemble_;
  Node& node_;
  Rng rng_;
  // Each fresh handle's draws (its connect time, its list's start), split
  // off after the first start was drawn, so no other draw moved.
  Rng fresh_rng_;
  bool started_ = false;  // a first session was asked for
  ZkSessionState state_ = ZkSessionState::kNotStarted;
  SessionId session_ = 0;
  Duration requested_;
  Duration timeout_;  // requested until negotiated
  Zxid last_zxid_ = 0;
  std::shared_ptr<Connection> conn_;
  int server_id_ = 0;
  // The server list: zk-<list_start_> onwards, wrapping at the end;
  // list_next_ is the index of the next server to try.
  int list_start_ = 1;
  int list_next_ = 0;
  // Servers that failed in a row since the last connection (or the handle's
  // start): the whole list failed at size().
  int failed_in_row_ = 0;
  TimePoint last_send_{};
  TimePoint last_recv_{};
  TimePoint attempt_started_{};
  TimePoint first_attempt_at_{};  // when the process's first attempt is (was) due
  uint64_t timer_generation_ = 0;
  int64_t next_xid_ = 1;
  std::deque<std::shared_ptr<Op>> ops_;  // in xid order
  std::deque<ZkEvent> events_;
  std::shared_ptr<Waiter> event_waiter_;
  std::vector<std::shared_ptr<Waiter>> state_waiters_;
  std::set<std::string> data_watches_, exist_watches_, child_watches_;
  bool crashed_ = false;
  uint64_t requests_sent_ = 0;
  std::vector<SessionId> sessions_;
  // Alive flag shared with timers: a timer firing after the handle is gone
  // does nothing.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace locksim::sim::zookeeper
