// A client's TCP connection to one ZooKeeper server, over the simulated
// network, and the messages it carries.
//
// Why its own ordering: the simulated network's streams (sim/connection.h)
// are FIFO per pair of nodes and hold bytes across a partition, but a stream
// is shared by every connection between the two nodes and is emptied when a
// process crashes or the retransmission limit breaks it. ZooKeeper depends on
// one connection's order — a watch notification must reach the client before
// the reply of the operation that caused it, replies come in request order —
// so each direction numbers its messages and the receiver runs them strictly
// in that order. A message the network drops leaves a gap that never fills:
// everything after it is held, which is what a TCP connection whose peer went
// silent looks like. The client library notices the silence (no ping reply
// within 2T/3) and moves on to a new connection, as the real one does; what
// the old connection still held dies with it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "env/zk_connection.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/zookeeper/data_tree.h"
#include "sim/zookeeper/watch_manager.h"

namespace locksim::sim::zookeeper {

// The server's answer to one request.
struct ZkReply {
  int64_t xid = 0;
  ZkError error = ZkError::kOk;
  std::string path;
  ZkStat stat;
  std::vector<std::string> children;
  std::string data;
  Zxid zxid = 0;  // the server's last applied zxid when it replied
};

// First message on every connection: a new session (session 0) or the
// client's existing one, with the watches it wants re-registered.
struct ConnectRequest {
  SessionId session = 0;
  Zxid last_zxid_seen = 0;
  Duration requested_timeout = Duration::zero();
  std::vector<std::string> data_watches;   // getData / exists on an existing node
  std::vector<std::string> exist_watches;  // exists on a missing node
  std::vector<std::string> child_watches;
};

struct ConnectResponse {
  bool expired = false;  // the session is unknown to the ensemble
  SessionId session = 0;
  Duration timeout = Duration::zero();  // negotiated
};

class ZkClient;
class ZkServer;

// One direction of a connection: messages run at the receiver in send order.
class OrderedPipe {
 public:
  // Queues `message` to run at `to` after every earlier one on this pipe.
  // `keep` keeps the connection alive while the message travels.
  // A Callback, not a std::function: a message's usual captures (the
  // connection, an xid, a shared op) fit in it without an allocation.
  void send(Network& net, const Node& from, Node& to, Callback message, std::shared_ptr<void> keep);

  // Messages held behind a gap, at most; beyond it the pipe is dead (a TCP
  // connection whose peer stopped acknowledging has a bounded send window).
  static constexpr size_t kHeldMax = 10'000;

 private:
  void arrive(uint64_t seq, Callback message);

  uint64_t next_send_ = 0;
  uint64_t next_run_ = 0;
  std::map<uint64_t, Callback> held_;
};

// Both directions of one connection. Shared by the client and the server
// (and by messages in flight), so neither side's going away leaves the other
// holding a dangling pointer; `closed` marks it dead for both.
struct Connection {
  ConnId id = 0;
  Node* client_node = nullptr;
  Node* server_node = nullptr;
  ZkClient* client = nullptr;
  ZkServer* server = nullptr;
  OrderedPipe up;    // client -> server
  OrderedPipe down;  // server -> client
  bool closed = false;
};

}  // namespace locksim::sim::zookeeper
