// ZooKeeper's data tree as a pure step function: the znodes, the session
// table, and the two halves of executing a write.
//
// ZooKeeper splits a write in two, and so does this class:
//   prepare — on the leader only, against the tree as it will be once every
//             earlier proposal is applied: validates the request and turns it
//             into a transaction (Txn) with everything decided — the
//             sequential name, the error if it fails (a failed write is an
//             error txn that still takes a zxid, as in ZooKeeper);
//   apply   — on every server, in zxid order: executes a Txn. A Txn always
//             applies to a tree that has applied exactly the txns before it,
//             so it cannot fail (asserted).
// Reads are plain queries. Watches are not here (they belong to a server's
// connections, see watch_manager.h): apply() returns the events a change
// fires, and the server hands them to its WatchManager.
//
// Sequential numbering (checked against ZooKeeper 3.8 by the differential
// test): the suffix is the parent's count of successful child creates, of any
// kind of child. Deletes and failed creates do not count — so it is not the
// cversion a client reads, which counts deletes too. If a plain child already
// holds the next name, the sequential create fails with NODEEXISTS and the
// count stays put (every later attempt fails the same way).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "env/time.h"
#include "env/zk_connection.h"

namespace locksim::sim::zookeeper {

using Zxid = int64_t;       // (epoch << 32) | counter, as in ZooKeeper
using SessionId = int64_t;  // never 0 for a real session

inline constexpr Zxid make_zxid(int64_t epoch, int64_t counter) {
  return (epoch << 32) | counter;
}
inline constexpr int64_t epoch_of(Zxid z) {
  return z >> 32;
}

enum class OpKind {
  kCreate,
  kDelete,
  kSetData,
  kExists,
  kGetChildren,
  kGetData,
  kSync,
  kCreateSession,  // server-internal: a new session asked for
  kCloseSession,   // the client's close(), or the leader's expiry
};
bool is_write(OpKind k);  // goes through the leader and takes a zxid

struct Request {
  OpKind kind = OpKind::kExists;
  std::string path;
  std::string data;
  ZkCreateFlags flags;
  int32_t version = -1;                         // kDelete, kSetData: -1 matches any
  bool watch = false;                           // reads: leave a one-shot watch
  Duration session_timeout = Duration::zero();  // kCreateSession: the negotiated one
};

struct Txn {
  enum class Type { kCreate, kDelete, kSetData, kCreateSession, kCloseSession, kError };
  Type type = Type::kError;
  Zxid zxid = 0;
  SessionId session = 0;  // the session that asked (the one created or closed, for those)
  int64_t time_ms = 0;    // the leader's wall clock, for ctime/mtime
  std::string path;       // final path: with the sequence number
  std::string data;
  bool ephemeral = false;
  int32_t version = 0;                          // kSetData: the data version it sets
  Duration session_timeout = Duration::zero();  // kCreateSession
  ZkError error = ZkError::kOk;                 // kError
  // Routing only, ignored by the tree: the server, connection and request
  // the reply goes to once the txn is applied there.
  int origin_server = 0;
  uint64_t origin_conn = 0;
  int64_t xid = 0;
};

// A change a txn made, as a watch sees it.
struct ChangeEvent {
  ZkEventType type = ZkEventType::kCreated;
  std::string path;
};

struct TxnResult {
  ZkError error = ZkError::kOk;
  std::string path;                 // kCreate: the created path
  ZkStat stat;                      // kCreate, kSetData: the node's new stat
  std::vector<ChangeEvent> events;  // in the order ZooKeeper fires them

  // The path and the events go back to their thread's pool when the result
  // dies (env/argv_pool.h), their strings keeping their room: every server
  // (and the leader's prepared tree) applies every create and delete, and
  // each path is past the 15 characters a string keeps inline.
  TxnResult() = default;
  TxnResult(const TxnResult&) = default;
  TxnResult(TxnResult&&) noexcept = default;
  TxnResult& operator=(const TxnResult&) = delete;
  TxnResult& operator=(TxnResult&&) = delete;
  ~TxnResult() {
    if (!path.empty() || !events.empty()) give_back();
  }

 private:
  void give_back() noexcept;
};

class DataTree {
 public:
  DataTree();  // just the root "/"

  // The txn executing `r` for `session` would apply, decided against this
  // tree; `zxid` and `time_ms` are stamped on it. Pure. Precondition:
  // is_write(r.kind).
  Txn prepare(const Request& r, SessionId session, Zxid zxid, int64_t time_ms) const;

  // Executes `t`. Precondition: t.zxid > last_zxid() and t was prepared
  // against a tree equal to this one (asserted where it matters).
  TxnResult apply(const Txn& t);

  ZkStatResult exists(const std::string& path) const;
  ZkChildrenResult children(const std::string& path) const;
  // How many children `path` has, 0 if it does not exist: children()'s
  // count without copying names (the exposure monitor asks after events).
  size_t child_count(const std::string& path) const;
  ZkDataResult data(const std::string& path) const;

  bool has_session(SessionId s) const { return sessions_.count(s) != 0; }
  // Every live session and its negotiated timeout, by id.
  const std::map<SessionId, Duration>& sessions() const { return sessions_; }
  // The session's ephemeral nodes (empty for an unknown session).
  std::vector<std::string> ephemerals_of(SessionId s) const;

  Zxid last_zxid() const { return last_zxid_; }
  size_t node_count() const { return nodes_.size(); }

  bool operator==(const DataTree&) const = default;

  // "" when `path` is a valid znode path ("/" or "/a/b", no empty or "."
  // components, no trailing "/"), else why not. `sequential` allows a
  // trailing "/" (the server appends the number).
  static std::string path_problem(const std::string& path, bool sequential);
  // Views into `path` (it must outlive them): a lookup by them allocates
  // nothing (the maps below compare transparently).
  static std::string_view parent_of(std::string_view path);  // "/a" -> "/", "/a/b" -> "/a"
  static std::string_view name_of(std::string_view path);    // "/a/b" -> "b"

 private:
  struct Node {
    std::string data;
    ZkStat stat;
    std::set<std::string, std::less<>> children;  // names (a Names)
    int32_t child_creates = 0;                    // the sequential counter (see the top)
    bool operator==(const Node&) const = default;
  };

  Txn prepare_create(const Request& r, Txn t) const;
  Txn prepare_delete(const Request& r, Txn t) const;
  Txn prepare_set_data(const Request& r, Txn t) const;
  void apply_create(const Txn& t, TxnResult& out);
  void apply_delete(const std::string& path, Zxid zxid, TxnResult& out);
  void apply_set_data(const Txn& t, TxnResult& out);
  ZkStat stat_of(const Node& n) const;

  using Nodes = std::map<std::string, Node, std::less<>>;
  using Names = std::set<std::string, std::less<>>;
  using Ephemerals = std::map<SessionId, Names>;

  // Entries a delete took out of the maps and sets below, kept for the next
  // create, their strings keeping their room: a lock's create and delete,
  // repeated all run long on every server (and the leader's prepared tree),
  // then cost no allocation (the map node, the path, the parent's child
  // name, the session's ephemeral path). Not part of the tree: equality
  // ignores them and a copy starts with none (node handles cannot be copied).
  struct Spares {
    static constexpr size_t kMax = 64;  // of each kind
    std::vector<Nodes::node_type> nodes;
    std::vector<Names::node_type> names;
    std::vector<Ephemerals::node_type> sessions;
    Spares() = default;
    Spares(const Spares&) {}
    Spares(Spares&&) noexcept = default;
    Spares& operator=(const Spares&) { return *this; }
    Spares& operator=(Spares&&) noexcept = default;
    bool operator==(const Spares&) const { return true; }
  };
  // An entry for a new node at `path`: a spare (its Node to be reset) or new.
  Nodes::node_type take_node(const std::string& path);
  // The session's set of ephemeral paths, made (from a spare) if it has none.
  Names& ephemerals_for(SessionId session);
  // Inserts `name` into `set`, into a spare entry when there is one.
  void insert_name(Names& set, std::string_view name);
  // Keeps an entry taken out of the tree (or frees it, past kMax).
  template <class Handle>
  static void keep(std::vector<Handle>& spares, Handle&& entry) {
    if (!entry.empty() && spares.size() < Spares::kMax) spares.push_back(std::move(entry));
  }

  Nodes nodes_;  // by full path
  std::map<SessionId, Duration> sessions_;
  Ephemerals ephemerals_;
  Zxid last_zxid_ = 0;
  Spares spares_;
};

}  // namespace locksim::sim::zookeeper
