// One simulated ZooKeeper server process on its own node.
//
//   - Roles: LOOKING (serves nobody: a new connection is reset at once),
//     FOLLOWING or LEADING. The ensemble (ensemble.h) decides role changes
//     from who can hear whom; this class does the work of each role.
//   - Writes: the server a client is connected to forwards each write to the
//     leader; the leader prepares it against its tree-plus-proposals
//     (DataTree::prepare), logs it, proposes it to its followers, and commits
//     it once a quorum (itself included) has logged it; every server applies
//     committed txns in zxid order, and the client's own server replies after
//     applying it — after firing the watches it triggered, on the same
//     ordered connection, so the notification arrives first.
//   - Reads are answered from the server's own applied tree, so they may lag
//     the leader; a connection's requests are handled strictly in order (a
//     read waits behind the same client's write), so a client sees its own
//     writes. sync waits until the server has applied what the leader had
//     committed when the sync reached it.
//   - Durability: the applied tree and the logged txns survive a crash (they
//     are fsynced before a follower acknowledges); connections, watches, the
//     role and the leader's session deadlines do not.
//   - Sessions: the leader expires them on its monotonic clock, at
//     (floor((last + T) / tick) + 1) * tick where `last` is when it heard of
//     the client's last packet (its own, or a follower's touch report, sent
//     every half tick as ZooKeeper's follower pings do). It checks at each
//     multiple of tick on that clock, as ZooKeeper's SessionTracker thread
//     sleeps until the next bucket. The clock's origin is the server's own
//     (a JVM's nanoTime counts from boot), so each server's buckets fall at a
//     tick phase of their own, drawn from the seed. A wall-clock jump of the
//     server changes nothing here; drift does (it is the oscillator).
//     A new leader gives every session a fresh T from when it leads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/network.h"
#include "sim/node.h"
#include "sim/world.h"
#include "sim/zookeeper/data_tree.h"
#include "sim/zookeeper/watch_manager.h"
#include "sim/zookeeper/wire.h"
#include "sim/zookeeper/zk_params.h"

namespace locksim::sim::zookeeper {

class ZkEnsemble;

class ZkServer {
 public:
  enum class Role { kLooking, kFollowing, kLeading };

  // Server `id` (1-based) of `ensemble`, on a node named "zk-<id>". Its
  // monotonic clock reads `tick_phase` when the run begins; requires
  // 0 <= tick_phase < params.tick.
  ZkServer(World& world, Network& net, ZkEnsemble& ensemble, int id, const ZkParams& params,
           Duration tick_phase);
  ZkServer(const ZkServer&) = delete;
  ZkServer& operator=(const ZkServer&) = delete;

  Node& node() { return node_; }
  const Node& node() const { return node_; }
  int id() const { return id_; }
  Role role() const { return role_; }
  int64_t epoch() const { return epoch_; }
  int leader_id() const { return leader_id_; }
  const DataTree& tree() const { return tree_; }
  // How many times what the exposure question reads of this server changed:
  // its role, epoch or leader, its tree replaced, or applied to while it
  // leads (a follower's tree is read only once it leads, which is a role
  // change). Summed by ZkEnsemble::state_stamp.
  uint64_t answer_changes() const { return answer_changes_; }
  // The highest zxid this server has logged (applied or not): what an
  // election compares.
  Zxid last_logged_zxid() const;
  // The server's monotonic clock, in ns: tick_phase when the run began, then
  // at the node's drift; never jumps.
  int64_t mono_ns();

  // --- Leader only (for reports and the exposure check) ---
  // When the leader will expire `s`, and when it last heard of it, on its
  // monotonic clock; nullopt when it does not track `s`.
  std::optional<int64_t> session_deadline_ns(SessionId s) const;
  std::optional<int64_t> session_last_heard_ns(SessionId s) const;

  // --- Role changes, made by the ensemble ---
  void lead(int64_t epoch);       // commits its own log, then serves
  void follow(ZkServer& leader);  // takes the leader's state, then serves
  void stop_serving();            // LOOKING: resets every client connection
  void periodic();                // every half tick: touches, resends
  TimePoint role_since() const { return role_since_; }

  // --- From clients, run at this node in connection order ---
  void on_connect(const std::shared_ptr<Connection>& c, const ConnectRequest& req);
  // `r` is the client's request, which nobody changes once it is sent: the
  // server keeps the pointer, not a copy (a path and data copied per request
  // and again per forward to the leader).
  void on_request(const std::shared_ptr<Connection>& c, int64_t xid,
                  std::shared_ptr<const Request> r);
  void on_ping(const std::shared_ptr<Connection>& c);
  void on_client_gone(ConnId c);

  uint64_t requests_handled() const { return requests_; }

 private:
  struct Pending {
    int64_t xid = 0;
    std::shared_ptr<const Request> request;  // never null
  };
  struct ServerConn {
    std::shared_ptr<Connection> conn;
    SessionId session = 0;
    bool established = false;  // the connect handshake finished
    ConnectRequest hello;      // kept until established (the watches to re-register)
    std::deque<Pending> queue;
    bool head_forwarded = false;
    std::optional<Zxid> sync_target;
  };
  struct PendingSync {
    int origin = 0;
    ConnId conn = 0;
    int64_t xid = 0;
    Zxid target = 0;
  };

  // Client side.
  void send_down(const std::shared_ptr<Connection>& c, Callback message);
  void reset(const std::shared_ptr<Connection>& c);
  void close_conn(ConnId id, bool send_reset);
  void touch(SessionId s);
  void process_queue(ServerConn& sc);
  void answer_read(ServerConn& sc, const Pending& p);
  void reply(ServerConn& sc, ZkReply r);
  void finish_connect(ServerConn& sc, SessionId s, Duration timeout);
  void register_watches(ServerConn& sc);

  // Applying committed txns.
  void apply_committed(const Txn& t);
  void route_result(const Txn& t, const TxnResult& result);
  void answer_syncs();

  // Leader side.
  // Sends `message(leader)` to our leader, nothing when we have none. Always
  // through the network, also to ourselves: handing a request to our own
  // leader role is a step of the pipeline, never a re-entrant call. A
  // template, not a std::function: the usual message (an ack, three
  // numbers) then travels inside its event, without an allocation.
  template <class F>
  void send_to_leader(F&& message) {
    ZkServer* target = leader_or_null();
    if (target == nullptr) return;
    net_.send(node_, target->node_,
              [target, message = std::forward<F>(message)]() mutable { message(*target); });
  }
  ZkServer* leader_or_null();
  void leader_on_forward(int origin, ConnId conn, int64_t xid, SessionId s, const Request& r);
  void leader_on_revalidate(int origin, ConnId conn, SessionId s);
  void leader_touch(SessionId s);
  void propose(Txn t);
  void leader_on_ack(int from, int64_t epoch, Zxid upto);
  void try_commit();
  void check_syncs();
  void expire_sessions();
  void schedule_session_check();
  void resend_to_followers();
  void forward_error(int origin, ConnId conn, int64_t xid, ZkError e);

  // Follower side.
  void follower_on_propose(int64_t epoch, const Txn& t);
  void follower_on_commit(int64_t epoch, Zxid upto);
  Zxid contiguous_logged() const;
  Zxid next_after(Zxid z) const;
  void apply_up_to(Zxid upto);
  void send_ack();

  void on_crash();
  void on_restart();

  World& world_;
  Network& net_;
  ZkEnsemble& ensemble_;
  int id_;
  ZkParams params_;
  Node node_;
  Role role_ = Role::kLooking;
  int64_t epoch_ = 0;
  int leader_id_ = 0;
  TimePoint role_since_{};

  // Durable.
  DataTree tree_;  // applied
  // See answer_changes(). Not a ChangeCount in the World's total: only the
  // Redis and MySQL stamps read that, and no such run has a ZooKeeper server.
  uint64_t answer_changes_ = 0;
  // A change of role, epoch, leader or whole tree.
  void role_changed() { ++answer_changes_; }
  std::map<Zxid, Txn> log_;  // logged, not yet applied
  // Map nodes an apply took out of log_, kept for the next logged txn (their
  // Txn's path and data keep their room): every server logs every proposal
  // and erases it at the commit, a map node and a path allocated per write
  // and server. Not state: nothing reads a spare.
  static constexpr size_t kLogSparesMax = 64;
  std::vector<std::map<Zxid, Txn>::node_type> log_spares_;
  void log_txn(const Txn& t);                            // log_[t.zxid] = t
  void apply_logged(std::map<Zxid, Txn>::iterator txn);  // applies it, erases it

  // Monotonic clock state (rebased when the node's drift changes).
  TimePoint mono_base_true_{};
  int64_t mono_base_ns_ = 0;
  int64_t mono_ppm_ = 0;
  // A session check is waiting for the paused node to resume: one is enough.
  bool session_check_queued_ = false;

  // Volatile.
  std::map<ConnId, ServerConn> conns_;
  std::map<SessionId, ConnId> session_conn_;
  WatchManager watches_;
  // Follower: the sessions to report to the leader, ascending, each once (a
  // vector keeps its room between ticks; a set made a node per touch).
  std::vector<SessionId> touched_;
  Zxid commit_index_ = 0;  // follower: what the leader said is committed

  // Leader state.
  DataTree prep_tree_;         // tree_ plus every proposal
  int64_t next_counter_ = 1;   // of this epoch's zxids
  std::map<int, Zxid> acked_;  // by follower id: logged contiguously up to
  std::map<SessionId, int64_t> deadline_ns_;
  std::map<SessionId, int64_t> last_heard_ns_;
  std::set<SessionId> closing_;
  std::vector<PendingSync> syncs_;

  uint64_t requests_ = 0;
};

}  // namespace locksim::sim::zookeeper
