// The simulated network: TCP streams between nodes, per-link latency, loss,
// delay spikes and (one- or two-way) partitions.
//
// Every message travels on the stream from its sender's node to its
// receiver's (sim/connection.h): FIFO per direction, so jitter never reorders
// it. A partition *holds* a stream — its bytes arrive, in order, with the
// first retransmission after the heal — unless it lasts past the
// retransmission limit, when the connections between the two nodes break and
// what was held is lost. A loss draw delays a message by TCP's retransmission
// timeout. A crashed process resets its connections at once: its streams are
// emptied and each client of it is told, one latency later, if the link lets
// the RST through. A paused or cut-off node is silent.
//
// Latency is base + exponential(jitter_mean) (+ an active delay spike) per
// message, drawn when it is sent; it arrives at that time or, behind a slower
// one, just after it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "env/time.h"
#include "sim/callback.h"
#include "sim/change_count.h"
#include "sim/connection.h"
#include "sim/rng.h"
#include "sim/stream_index.h"

namespace locksim::sim {

class Node;
class World;

struct LinkParams {
  Duration latency_base = Duration::micros(200);
  Duration latency_jitter_mean = Duration::micros(300);
  // Probability that a packet is lost and must be retransmitted (a delay of
  // one RTO, doubling per further loss), in [0, 1].
  double loss_probability = 0.0;
};

class Network {
 public:
  Network(World& world, Rng rng, TcpParams tcp = {});
  // Touches nothing else: the World and Connection handles may outlive it or
  // go first (a run tears the World down first); both check lifetime().
  ~Network() = default;
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  const TcpParams& tcp() const { return tcp_; }
  // Expires when the network is destroyed.
  std::weak_ptr<int> lifetime() const { return lifetime_; }

  // Link parameters must be in range (latencies >= 0, loss in [0, 1]):
  // validation of the run's input guarantees it.
  void set_default_link(const LinkParams& p);
  // Both directions between the two distinct nodes.
  void set_link(const Node& a, const Node& b, const LinkParams& p);
  // The loss rate of both directions between a and b from now on (a fault).
  void set_loss_probability(const Node& a, const Node& b, double loss_probability);
  double loss_probability(const Node& a, const Node& b) const {
    return link(a, b).loss_probability;
  }
  // Twice the base latency between a and b: a handshake without jitter.
  Duration round_trip_base(const Node& a, const Node& b) const {
    return link(a, b).latency_base * 2;
  }

  // A cut is one partition: the links it took down. A link is down while
  // any cut holds it, so two overlapping partitions each end on their own.
  using CutId = uint64_t;
  // Cuts every link between a node in `side_a` and one in `side_b`, both
  // ways, until restore(the returned id) or heal().
  CutId partition(const std::vector<const Node*>& side_a, const std::vector<const Node*>& side_b);
  // Cuts only the direction from each node of `from` to each node of `to`.
  CutId partition_one_way(const std::vector<const Node*>& from, const std::vector<const Node*>& to);
  // Ends one cut: its links come back unless another cut still holds them.
  // Nothing for a cut heal() already ended.
  void restore(CutId cut);
  // Ends every cut. Held streams whose link is back resume with their next
  // retransmission (both calls).
  void heal();
  // Adds `extra` to the latency of messages sent between the sides (both
  // ways) until remove_delay with the same arguments. Order is kept.
  void add_delay(const std::vector<const Node*>& side_a, const std::vector<const Node*>& side_b,
                 Duration extra);
  void remove_delay(const std::vector<const Node*>& side_a, const std::vector<const Node*>& side_b,
                    Duration extra);

  // Both directions up (a node is always connected to itself).
  bool connected(const Node& a, const Node& b) const;
  // The direction from -> to is up.
  bool can_send(const Node& from, const Node& to) const;

  // Sends `message` from `from` to `to` on the two nodes' implicit peer link
  // (the long-lived connection a replication link or a quorum channel keeps):
  // it runs via to.deliver() on arrival, after every earlier message from
  // `from` to `to`.
  void send(const Node& from, Node& to, Callback&& message);

  // --- Connections (used by sim::Connection; see there). ---
  uint64_t open_connection(Node& client, Node& server);
  void send_on(uint64_t connection, bool to_server, Callback&& message);
  void close_connection(uint64_t connection);
  ConnectionState connection_state(uint64_t connection) const;
  void set_failure_handler(uint64_t connection, FailureHandler handler);
  // The Connection handle is gone: like close(), and its handler is dropped.
  void release_connection(uint64_t connection);

  // Counts: every message sent is dropped, in flight (travelling or held), or
  // arrived (handed to its node, which may still drop it if crashed).
  // Asserted on every change.
  uint64_t sent() const { return sent_; }
  uint64_t dropped() const { return dropped_; }
  uint64_t in_flight() const { return in_flight_; }
  uint64_t arrived() const { return arrived_; }
  uint64_t connections_broken() const { return broken_; }
  uint64_t connections_reset() const { return reset_; }
  // How many times a link went down or came back (what connected() answers
  // can change only then).
  uint64_t cut_changes() const { return cut_changes_.value(); }

 private:
  using Pair = std::pair<std::string, std::string>;  // by name: deterministic order
  using StreamKey = StreamIndex::Key;
  struct ConnectionRecord {
    Node* client = nullptr;
    Node* server = nullptr;
    ConnectionState state = ConnectionState::kOpen;
    bool reset_unseen = false;  // reset while the RST could not reach the client
    FailureHandler on_failure;
    // Its two streams, [0] to the client and [1] to the server, once made:
    // a send finds its stream without the index's hash lookup. Streams live
    // as long as the Network, so the pointers never dangle.
    Stream* streams[2] = {nullptr, nullptr};
  };

  static Pair key(const Node& a, const Node& b);
  static Pair directed(const Node& from, const Node& to);
  const LinkParams& link(const Node& a, const Node& b) const;
  Stream& stream(const Node& from, const Node& to, uint64_t connection);
  Duration draw_latency(const Node& from, const Node& to);
  // `cached`: where the stream's pointer is kept (a connection's record), or
  // null to look it up by its key (the implicit peer link).
  void enqueue(const Node& from, Node& to, uint64_t connection, Stream** cached,
               Callback&& message);
  // The record of connection `id` (asserted to exist): ids are handed out
  // 1, 2, 3, ... and records are never removed, so it is slot id - 1.
  ConnectionRecord& record(uint64_t id);
  const ConnectionRecord& record(uint64_t id) const;
  void schedule_pump(Stream& s, TimePoint at);
  void pump(Stream& s);
  void deliver(Stream& s, Packet p);
  void block(Stream& s);
  void give_up(Stream& s, uint64_t blocks);
  // Breaks the connection of `s` (both of its streams; for the implicit
  // link, the two nodes' link): everything held is lost.
  void break_connection(const Stream& s);
  void node_crashed(const Node& node);
  void cut(CutId id, const std::vector<const Node*>& from, const std::vector<const Node*>& to);
  void resume_restored_links();
  void notify(uint64_t id, ConnectionRecord& c, ConnectionState why);
  void check_counts() const;

  World& world_;
  Rng rng_;
  TcpParams tcp_;
  LinkParams default_link_;
  std::map<Pair, LinkParams> links_;
  // Directed (from, to) -> how many cuts hold it; a link is down while > 0.
  // The per-link count keeps can_send() one lookup on the send path.
  std::map<Pair, int> cut_;
  std::map<CutId, std::vector<Pair>> cuts_;  // each live cut's directed links
  CutId next_cut_ = 1;
  // Each link going down or coming back (a cut made, restored or healed:
  // what connected() answers can change only then), counted in the
  // World's state_changes().
  ChangeCount cut_changes_;
  std::map<Pair, Duration> extra_;  // directed: active delay spikes
  // Streams in creation order (iterated: deterministic), and a lookup index
  // by node address (never iterated, so pointer order cannot leak).
  std::vector<std::unique_ptr<Stream>> streams_;
  StreamIndex stream_index_;
  // By id - 1 (see record()); iterated in id order, as the map it replaced.
  std::vector<ConnectionRecord> connections_;
  uint64_t next_connection_ = 1;
  uint64_t sent_ = 0;
  uint64_t dropped_ = 0;
  uint64_t in_flight_ = 0;
  uint64_t arrived_ = 0;
  uint64_t broken_ = 0;
  uint64_t reset_ = 0;
  std::shared_ptr<int> lifetime_ = std::make_shared<int>(0);
};

}  // namespace locksim::sim
