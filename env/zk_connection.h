// One client's session with a ZooKeeper ensemble: the seam beside RedisConnection.
//
// ZooKeeper is not a request/response store like Redis: a client holds a
// *session* (kept alive by its library's pings, ended by the ensemble on its
// own monotonic clock), its ephemeral nodes live exactly as long as that
// session, and it learns of changes through one-shot watches. So the seam
// offers the znode operations the lock recipes use, each answered with
// ZooKeeper's own error code, plus the session's state and one ordered queue
// of events (watch notifications and session state changes).
//
// The simulated client library (sim/zookeeper/zk_client.h) and the ZooKeeper C
// client (live/zk_connection_live.h) both sit behind it, so the same
// recipe code runs against the simulated ensemble and a real one, and the
// simulated ensemble can be checked against real ZooKeeper operation by
// operation (tests/zk_differential_test.cpp).
//
// Threads: one client (fiber or thread) uses a connection; none of the calls
// may be made concurrently on one connection.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "env/time.h"

namespace locksim {

// ZooKeeper's error codes, with the numbers of the C client (zookeeper.h), so
// the live layer maps them one to one and histories show the real names.
enum class ZkError : int {
  kOk = 0,
  kSystemError = -1,
  kConnectionLoss = -4,    // the request may or may not have been executed
  kOperationTimeout = -7,  // no connection within the call's bound
  kBadArguments = -8,
  kApiError = -100,
  kNoNode = -101,
  kBadVersion = -103,
  kNoChildrenForEphemerals = -108,
  kNodeExists = -110,
  kNotEmpty = -111,
  kSessionExpired = -112,  // the session is gone; every later call fails too
  kClosing = -116,         // the handle was closed by its owner
};

// ZooKeeper's upper-case names: "OK", "NODEEXISTS", "CONNECTIONLOSS", ...
const char* to_string(ZkError e);

// A znode's metadata, as the server's Stat structure carries it.
struct ZkStat {
  int64_t czxid = 0;  // zxid of the create: monotonic across the ensemble (a fencing token)
  int64_t mzxid = 0;
  int64_t pzxid = 0;  // zxid of the last change to the children
  int64_t ctime_ms = 0;
  int64_t mtime_ms = 0;
  int32_t version = 0;   // data changes
  int32_t cversion = 0;  // child changes: creates and deletes
  int32_t aversion = 0;
  int64_t ephemeral_owner = 0;  // the owning session, 0 for a persistent node
  int32_t data_length = 0;
  int32_t num_children = 0;

  // Member-wise: what DataTree's comparison of two trees (a snapshot
  // against a replica's tree) needs.
  bool operator==(const ZkStat&) const = default;
};

struct ZkCreateFlags {
  bool ephemeral = false;   // deleted when the creating session ends
  bool sequential = false;  // the server appends a 10-digit sequence number
};

// Where a session stands, from the client library's point of view.
enum class ZkSessionState {
  kNotStarted,  // no session asked for yet
  kConnecting,  // asked for, or lost the connection to its server: Curator's SUSPENDED
  kConnected,
  kExpired,  // the ensemble ended the session; the handle is dead (Curator's LOST)
  kClosed,   // closed by its owner
};
const char* to_string(ZkSessionState s);  // "connecting", "connected", ...

enum class ZkEventType {
  kCreated,          // an exists watch: the node appeared
  kDeleted,          // an exists/getData/getChildren watch: the node went away
  kDataChanged,      // an exists/getData watch: setData on the node
  kChildrenChanged,  // a getChildren watch: a child was created or deleted
  kSession,          // the session's state changed (to `state`)
};
const char* to_string(ZkEventType t);

struct ZkEvent {
  ZkEventType type = ZkEventType::kSession;
  std::string path;                                   // for watch events
  ZkSessionState state = ZkSessionState::kConnected;  // for session events
};

struct ZkCreateResult {
  ZkError error = ZkError::kOk;
  std::string path;  // the created path (with the sequence number), on kOk
  ZkStat stat;       // the new node's stat, on kOk
};

struct ZkStatResult {
  ZkError error = ZkError::kOk;  // exists: kNoNode when the node is absent
  ZkStat stat;
};

struct ZkChildrenResult {
  ZkError error = ZkError::kOk;
  std::vector<std::string> children;  // names, not paths; in no particular order
  ZkStat stat;                        // the parent's

  // The names go back to their thread's pool when the result dies or is
  // overwritten (env/argv_pool.h), their strings keeping their room, and
  // the simulated server copies the next getChildren's names into them: a
  // lock's waiters ask for the children on every turn, and each name is
  // past the 15 characters a string keeps inline.
  ZkChildrenResult() = default;
  ZkChildrenResult(ZkError error, std::vector<std::string> children, ZkStat stat)
      : error(error), children(std::move(children)), stat(stat) {}
  ZkChildrenResult(const ZkChildrenResult&) = default;
  ZkChildrenResult(ZkChildrenResult&&) noexcept = default;
  ZkChildrenResult& operator=(const ZkChildrenResult&) = default;
  ZkChildrenResult& operator=(ZkChildrenResult&& other) noexcept;
  // Inline for the common case, a result moved from, which has nothing to give back.
  ~ZkChildrenResult() {
    if (!children.empty()) give_back_children();
  }

 private:
  void give_back_children() noexcept;
};

struct ZkDataResult {
  ZkError error = ZkError::kOk;
  std::string data;
  ZkStat stat;
};

class ZkConnection {
 public:
  virtual ~ZkConnection() = default;

  // Starts a session if none was asked for yet and waits until it is
  // connected, for at most the connection's own bound (the negotiated or
  // requested session timeout). kOk once connected; kSessionExpired or kClosing
  // on a dead handle (use new_session()); kOperationTimeout when no server
  // answered in time (the session may still connect later). Every operation
  // below starts the session implicitly when none was asked for yet.
  virtual ZkError connect() = 0;

  // Abandons the current handle (closing its session if it is still
  // connected, so its ephemeral nodes go at once) and connects a fresh one:
  // what an application (Curator) does after kSessionExpired. Returns as
  // connect() does. Events of the old handle not yet taken are dropped.
  virtual ZkError new_session() = 0;

  // Closes the session: the ensemble deletes its ephemeral nodes and fires
  // their watches; every later call returns kClosing. Never throws.
  virtual void close() = 0;

  // The operations. Each blocks the calling client until the server replies
  // or the connection is lost (kConnectionLoss: a write may still have been
  // applied — the "unknown outcome"). On an expired handle every call returns
  // kSessionExpired, on a closed one kClosing. `version` -1 matches any.
  // With watch = true a one-shot watch is left on the path (exists: also when
  // the node does not exist; getChildren/getData: only when it does); its
  // notification is queued (see next_event) before the reply of the operation
  // that caused it is delivered. May throw sim::Cancelled in the simulation.
  virtual ZkCreateResult create(const std::string& path, const std::string& data,
                                ZkCreateFlags flags) = 0;
  virtual ZkError remove(const std::string& path, int32_t version) = 0;
  virtual ZkStatResult exists(const std::string& path, bool watch) = 0;
  virtual ZkChildrenResult get_children(const std::string& path, bool watch) = 0;
  virtual ZkDataResult get_data(const std::string& path, bool watch) = 0;
  virtual ZkStatResult set_data(const std::string& path, const std::string& data,
                                int32_t version) = 0;
  // Waits until the client's server has applied every write the leader had
  // committed when the sync reached it, so a read that follows sees them.
  virtual ZkError sync(const std::string& path) = 0;

  // The next event not yet taken (watch notifications and session changes,
  // in the order the client library received them), waiting up to `timeout`
  // of true time for one; nullopt when none came. timeout >= 0.
  virtual std::optional<ZkEvent> next_event(Duration timeout) = 0;

  virtual ZkSessionState state() const = 0;
  // The current session's id (0 before the first connect).
  virtual int64_t session_id() const = 0;
  // The session timeout the ensemble granted (the requested one clamped to
  // [2, 20] x tickTime); the requested one before the first connect.
  virtual Duration negotiated_timeout() const = 0;

  // Human-readable name of the ensemble ("zk" or "127.0.0.1:2181,..."), for messages.
  virtual std::string server_name() const = 0;
};

// ZooKeeper's sequential suffix: 10 digits, zero-padded ("lock-0000000042").
std::string zk_sequence_suffix(int32_t n);
// The number in a sequential name's last 10 characters, or -1 when the name
// does not end in 10 digits.
int64_t zk_sequence_of(const std::string& name);

}  // namespace locksim
