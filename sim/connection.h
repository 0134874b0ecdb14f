// TCP as the backends see it: ordered streams, held bytes, retransmission.
//
// Every backend locksim simulates speaks TCP, and TCP — not a datagram
// network — decides what a partition does to a lock: bytes are never lost on
// a live connection, they are *late*. This file holds the pieces of that
// model; sim/network.h wires them to nodes, partitions and crashes.
//
//   - Stream: one direction between two nodes. Messages leave it strictly in
//     send order (a message whose latency draw is short waits behind a slower
//     one: head-of-line blocking), so latency jitter never reorders it.
//   - A cut link holds the stream: the head is retransmitted on TCP's
//     schedule (RTO doubling from rto_min up to rto_max) and arrives with the
//     first retransmission after the heal, the rest behind it, in order. If
//     the head stays unacknowledged for retransmission_limit (Linux
//     tcp_retries2 = 15: 924.6 s from a 200 ms RTO), the connection breaks
//     and everything held is lost.
//   - A lost packet (the link's loss rate) is retransmitted after the RTO,
//     doubling per further loss: a delay, never a lost message.
//   - Connection: a client's TCP connection to a server (or a replication
//     link). Both endpoints' messages ride the two streams between their
//     nodes. Its state says what the client library would see: open, closed
//     by this side, reset by the peer (its process crashed: RST at once), or
//     broken (retransmission limit: ETIMEDOUT).
//
// Each connection has its own two streams (and its own retransmission
// timer), as separate sockets do: a new connection's bytes never wait behind
// an abandoned one's. Traffic sent with Network::send rides the two nodes'
// implicit peer link (connection 0), one long-lived connection per pair.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "env/assert.h"
#include "env/time.h"
#include "sim/callback.h"

namespace locksim::sim {

class Network;
class Node;

struct TcpParams {
  // Linux's TCP_RTO_MIN and TCP_RTO_MAX.
  Duration rto_min = Duration::millis(200);
  Duration rto_max = Duration::seconds(120);
  // How long an unacknowledged byte is retransmitted before the connection
  // breaks: tcp_retries2 = 15 with a 200 ms RTO is 0.2 s x (2^10 - 1) + 6 x 120 s.
  Duration retransmission_limit = Duration::millis(924'600);
  // A connect() to an unreachable peer with no client timeout gives up after
  // tcp_syn_retries = 6 SYNs: 1 + 2 + ... + 64 s.
  Duration connect_timeout_default = Duration::seconds(127);
  // A packet lost this many times in a row is not drawn again (a bound on
  // the draws, Tiger Style); the delay so far stands.
  int loss_redraws_max = 15;
};

// Whether the parameters make sense (asserted by the network; validated as
// input by the run).
bool valid(const TcpParams& p);

// The first retransmission of a segment first sent at `first_sent` that
// leaves at or after `at`, on TCP's doubling schedule; nullopt if that is past
// `first_sent + retransmission_limit` (the connection has broken by then).
// Precondition (asserted): at >= first_sent.
std::optional<TimePoint> next_retransmission(TimePoint first_sent, TimePoint at,
                                             const TcpParams& p);

// One message travelling one direction.
struct Packet {
  TimePoint sent;           // when the sender wrote it
  TimePoint ready;          // earliest arrival: sent + latency (+ loss and delay spikes)
  uint64_t connection = 0;  // 0: the nodes' implicit peer link (see Network::send)
  Callback message;
};

// One direction between two nodes: a FIFO of packets. Owned by the network;
// the pump logic lives there, the invariants here.
class Stream {
 public:
  // `connection` 0: the two nodes' implicit peer link (Network::send).
  Stream(Node& from, Node& to, uint64_t connection)
      : from_(&from), to_(&to), connection_(connection) {}

  Node& from() const { return *from_; }
  Node& to() const { return *to_; }
  uint64_t connection() const { return connection_; }
  bool empty() const { return count_ == 0; }
  size_t size() const { return count_; }
  const Packet& head() const;

  // Appends; `p.ready` may be earlier than the tail's (jitter): it still
  // leaves after it. Precondition (asserted): p.ready >= p.sent.
  void push(Packet&& p);
  // Removes and returns the head. Precondition (asserted): not empty.
  Packet pop();
  // Drops everything (a crash, a broken connection); returns how many.
  size_t clear();

  // Bumped by clear(): a scheduled pump or give-up event of an older
  // generation finds the stream changed under it and does nothing.
  uint64_t generation() const { return generation_; }
  bool pump_scheduled = false;
  bool pumping = false;  // inside Network::pump (a delivery may send on this stream)
  // Set while the head waits for a cut link to heal.
  bool blocked = false;
  // Bumped each time the stream blocks: a give-up event armed for an earlier
  // block finds a newer one and does nothing.
  uint64_t blocks = 0;
  // When the last packet left (arrivals never go back, asserted).
  TimePoint last_arrival{};

  // Packets a stream holds, at most; a sender past it is dropped, as a
  // socket's full send buffer would stall it (a run this long is broken).
  static constexpr size_t kQueuedMax = 100'000;

 private:
  Node* from_;
  Node* to_;
  uint64_t connection_;
  // A ring over slots_ (its size a power of two, grown by doubling): a
  // stream holds a packet or two at a time, and a deque allocated and freed
  // a block every few packets. Slots past the live ones hold empty packets.
  std::vector<Packet> slots_;
  size_t head_ = 0;   // index of the oldest packet
  size_t count_ = 0;  // live packets, from head_ on (wrapping)
  uint64_t generation_ = 0;
};

// What one connection looks like to its client.
enum class ConnectionState { kOpen, kClosed, kReset, kBroken };
// A client timeout of "none": wait for the reply as long as the connection
// lives (redis-py and hiredis without a socket timeout).
inline constexpr Duration kNoTimeout = Duration::max();
const char* to_string(ConnectionState s);

// What a connection's reset or break calls: a plain function and the context
// it is given. Not a std::function: every RPC sets one and clears it, and a
// std::function's making, moving and destroying cost 10-15 instructions an
// event of a Redis or MySQL lock run (issue 30, part 16). Whoever sets it
// keeps `context` alive until it clears it (or the Connection is gone).
struct FailureHandler {
  void (*on_failure)(void* context, ConnectionState why) = nullptr;
  void* context = nullptr;
  explicit operator bool() const { return on_failure != nullptr; }
  // Calling an empty handler is a broken invariant (as a Callback's), never
  // a silent no-op: the network tests before it calls.
  void operator()(ConnectionState why) const {
    LOCKSIM_ASSERT_MSG(on_failure != nullptr, "an empty failure handler called");
    on_failure(context, why);
  }
};

// A client's handle on one TCP connection to a server node. Opening it never
// blocks (see Network::connect for the handshake); the destructor closes it.
// Must not outlive the network.
class Connection {
 public:
  Connection(Network& net, Node& client, Node& server);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  uint64_t id() const { return id_; }
  Network& network() const { return net_; }
  Node& client() const { return *client_; }
  Node& server() const { return *server_; }
  ConnectionState state() const;
  bool open() const { return state() == ConnectionState::kOpen; }

  // Queues `message` to run at the server (resp. client) node, after every
  // earlier one in that direction. On a connection that is no longer open it
  // is dropped: nothing can be written to a dead socket.
  // (By rvalue, as every send on the path down to the stream: see Stream::push.)
  void to_server(Callback&& message);
  void to_client(Callback&& message);

  // The client closes: what it already sent still reaches the server, in
  // order (a client cannot recall bytes); what the server sends after is
  // discarded. Idempotent.
  void close();

  // Called on the main context when the connection is reset or broken (not
  // when this side closes it). Replaces any earlier handler; empty to clear.
  void on_failure(FailureHandler handler);

 private:
  Network& net_;
  std::weak_ptr<int> net_alive_;  // Network::lifetime(): the destructor may find it gone
  Node* client_;
  Node* server_;
  uint64_t id_;
};

}  // namespace locksim::sim
