#include "sim/network.h"

#include <algorithm>

#include "env/assert.h"
#include "sim/node.h"
#include "sim/world.h"

namespace locksim::sim {

namespace {

// What the scenario loader and run validation guarantee (bad values there
// are exit 2); here they are invariants.
bool valid(const LinkParams& p) {
  return p.latency_base >= Duration::zero() && p.latency_jitter_mean >= Duration::zero() &&
         p.loss_probability >= 0.0 && p.loss_probability <= 1.0;
}

}  // namespace

Network::Network(World& world, Rng rng, TcpParams tcp) : world_(world), rng_(rng), tcp_(tcp) {
  LOCKSIM_ASSERT_MSG(sim::valid(tcp_), "TCP parameters out of range");
  world_.count_changes_of(cut_changes_);
  // A crash resets the crashed process's connections (see node_crashed).
  world_.set_crash_observer([this, alive = lifetime()](const Node& n) {
    if (!alive.expired()) node_crashed(n);
  });
}

Network::Pair Network::key(const Node& a, const Node& b) {
  return a.name() < b.name() ? Pair{a.name(), b.name()} : Pair{b.name(), a.name()};
}

Network::Pair Network::directed(const Node& from, const Node& to) {
  return {from.name(), to.name()};
}

void Network::set_default_link(const LinkParams& p) {
  LOCKSIM_ASSERT_MSG(valid(p), "link parameters out of range");
  default_link_ = p;
}

void Network::set_link(const Node& a, const Node& b, const LinkParams& p) {
  LOCKSIM_ASSERT_MSG(valid(p), "link parameters out of range");
  LOCKSIM_ASSERT_MSG(&a != &b, "a link joins two nodes");
  links_[key(a, b)] = p;
}

void Network::set_loss_probability(const Node& a, const Node& b, double loss_probability) {
  LinkParams p = link(a, b);
  p.loss_probability = loss_probability;
  set_link(a, b, p);
}

const LinkParams& Network::link(const Node& a, const Node& b) const {
  if (links_.empty()) return default_link_;
  auto it = links_.find(key(a, b));
  return it == links_.end() ? default_link_ : it->second;
}

Network::CutId Network::partition(const std::vector<const Node*>& side_a,
                                  const std::vector<const Node*>& side_b) {
  const CutId id = next_cut_++;
  cut(id, side_a, side_b);
  cut(id, side_b, side_a);
  return id;
}

Network::CutId Network::partition_one_way(const std::vector<const Node*>& from,
                                          const std::vector<const Node*>& to) {
  const CutId id = next_cut_++;
  cut(id, from, to);
  return id;
}

void Network::cut(CutId id, const std::vector<const Node*>& from,
                  const std::vector<const Node*>& to) {
  std::vector<Pair>& links = cuts_[id];
  for (const Node* a : from) {
    for (const Node* b : to) {
      LOCKSIM_ASSERT(a != nullptr && b != nullptr);
      if (a == b) continue;
      links.push_back(directed(*a, *b));
      ++cut_[links.back()];
      cut_changes_.bump();
    }
  }
}

void Network::restore(CutId id) {
  const auto it = cuts_.find(id);
  if (it == cuts_.end()) return;  // heal() ended it already
  for (const Pair& link : it->second) {
    const auto held = cut_.find(link);
    // Pair of cut(): every link a live cut names is counted.
    LOCKSIM_ASSERT_MSG(held != cut_.end() && held->second > 0, "a cut link nobody counted");
    if (--held->second == 0) cut_.erase(held);
  }
  cuts_.erase(it);
  cut_changes_.bump();
  resume_restored_links();
}

void Network::heal() {
  cut_.clear();
  cuts_.clear();
  cut_changes_.bump();
  resume_restored_links();
}

void Network::resume_restored_links() {
  LOCKSIM_ASSERT_MSG(cut_.empty() || !cuts_.empty(), "no link is cut without a live cut");
  for (auto& owned : streams_) {
    Stream& s = *owned;
    if (!s.blocked || !can_send(s.from(), s.to())) continue;
    // Pair of block(): a blocked stream holds its head and has no pump.
    LOCKSIM_ASSERT_MSG(!s.empty() && !s.pump_scheduled, "a blocked stream without a held head");
    const auto retransmit = next_retransmission(s.head().sent, world_.now(), tcp_);
    if (!retransmit) {
      // Healed after the last retransmission the limit allows and before
      // the limit itself (a --retransmission-limit off TCP's schedule of
      // rto_min, 2 rto_min, ...): nothing is sent again, so the stream stays
      // held, and give_up() breaks it at the limit, as the kernel gives up
      // on a connection whose retries are spent.
      LOCKSIM_ASSERT(world_.now() < s.head().sent + tcp_.retransmission_limit);
      continue;
    }
    s.blocked = false;
    schedule_pump(s, *retransmit + link(s.from(), s.to()).latency_base);
  }
  for (size_t i = 0; i < connections_.size(); ++i) {
    ConnectionRecord& c = connections_[i];
    // The client's next retransmission meets the RST once both ways are up.
    if (!c.reset_unseen || !connected(*c.server, *c.client)) continue;
    c.reset_unseen = false;
    const uint64_t conn = i + 1;
    world_.after(link(*c.server, *c.client).latency_base * 2, [this, conn] {
      const ConnectionRecord& r = record(conn);
      if (r.on_failure) {
        auto handler = r.on_failure;
        handler(ConnectionState::kReset);
      }
    });
  }
}

void Network::add_delay(const std::vector<const Node*>& side_a,
                        const std::vector<const Node*>& side_b, Duration extra) {
  LOCKSIM_ASSERT_MSG(extra >= Duration::zero(), "a delay spike adds latency");
  for (const Node* a : side_a) {
    for (const Node* b : side_b) {
      if (a == b) continue;
      extra_[directed(*a, *b)] += extra;
      extra_[directed(*b, *a)] += extra;
    }
  }
}

void Network::remove_delay(const std::vector<const Node*>& side_a,
                           const std::vector<const Node*>& side_b, Duration extra) {
  for (const Node* a : side_a) {
    for (const Node* b : side_b) {
      if (a == b) continue;
      for (const Pair& k : {directed(*a, *b), directed(*b, *a)}) {
        auto it = extra_.find(k);
        // Pair of add_delay: only what was added is taken away.
        LOCKSIM_ASSERT_MSG(it != extra_.end() && it->second >= extra, "removing an absent delay");
        it->second -= extra;
        if (it->second == Duration::zero()) extra_.erase(it);
      }
    }
  }
}

bool Network::can_send(const Node& from, const Node& to) const {
  return &from == &to || cut_.empty() || cut_.count(directed(from, to)) == 0;
}

bool Network::connected(const Node& a, const Node& b) const {
  return can_send(a, b) && can_send(b, a);
}

Stream& Network::stream(const Node& from, const Node& to, uint64_t connection) {
  const StreamKey k{&from, &to, connection};
  if (Stream* known = stream_index_.find(k)) return *known;
  // Streams are created on first use, in the simulation's (deterministic) order.
  streams_.push_back(
      std::make_unique<Stream>(const_cast<Node&>(from), const_cast<Node&>(to), connection));
  stream_index_.insert(k, streams_.back().get());
  LOCKSIM_ASSERT(streams_.back()->connection() == connection);
  return *streams_.back();
}

Duration Network::draw_latency(const Node& from, const Node& to) {
  const LinkParams& p = link(from, to);
  // Draw both numbers every time, lost or not, so a loss elsewhere does not
  // shift this link's later latencies.
  const bool lost = rng_.chance(p.loss_probability);
  Duration latency = p.latency_base + rng_.exponential(p.latency_jitter_mean);
  LOCKSIM_ASSERT_MSG(latency >= p.latency_base, "a message faster than the link allows");
  if (lost) {
    // Retransmitted after the RTO, which doubles for each further loss.
    Duration rto = tcp_.rto_min;
    latency += rto;
    for (int i = 0; i < tcp_.loss_redraws_max && rng_.chance(p.loss_probability); ++i) {
      rto = std::min(rto * 2, tcp_.rto_max);
      latency += rto;
    }
  }
  if (!extra_.empty()) {
    auto it = extra_.find(directed(from, to));
    if (it != extra_.end()) latency += it->second;
  }
  return latency;
}

void Network::send(const Node& from, Node& to, Callback&& message) {
  enqueue(from, to, 0, nullptr, std::move(message));
}

void Network::enqueue(const Node& from, Node& to, uint64_t connection, Stream** cached,
                      Callback&& message) {
  LOCKSIM_ASSERT(message != nullptr);
  ++sent_;
  const Duration latency = draw_latency(from, to);
  if (cached != nullptr && *cached == nullptr) *cached = &stream(from, to, connection);
  Stream& s = cached != nullptr ? **cached : stream(from, to, connection);
  // Pair of the cache: it holds the stream the index would give.
  LOCKSIM_ASSERT(&s.from() == &from && &s.to() == &to && s.connection() == connection);
  if (s.size() >= Stream::kQueuedMax) {
    ++dropped_;
    check_counts();
    return;
  }
  const bool was_empty = s.empty();
  // Pair of pump(): a stream with packets has a pump scheduled or is blocked.
  LOCKSIM_ASSERT_MSG(was_empty || s.pump_scheduled || s.blocked || s.pumping,
                     "a stream nobody pumps");
  s.push(Packet{world_.now(), world_.now() + latency, connection, std::move(message)});
  ++in_flight_;
  // A pump running now (a message that sends on its own stream: a node
  // talking to itself) picks the new packet up when it finishes.
  if (was_empty && !s.pump_scheduled && !s.blocked && !s.pumping) {
    schedule_pump(s, world_.now() + latency);
  }
  check_counts();
}

void Network::schedule_pump(Stream& s, TimePoint at) {
  LOCKSIM_ASSERT_MSG(!s.pump_scheduled && !s.blocked, "a stream pumped twice");
  s.pump_scheduled = true;
  Stream* sp = &s;
  const uint64_t generation = s.generation();
  world_.at(std::max(at, world_.now()), [this, sp, generation] {
    if (sp->generation() != generation) return;  // emptied meanwhile (crash, break)
    sp->pump_scheduled = false;
    pump(*sp);
  });
}

void Network::pump(Stream& s) {
  const uint64_t generation = s.generation();
  LOCKSIM_ASSERT(!s.pumping && !s.blocked);
  s.pumping = true;
  while (!s.empty() && s.head().ready <= world_.now()) {
    if (!can_send(s.from(), s.to())) {
      s.pumping = false;
      block(s);
      return;
    }
    deliver(s, s.pop());
    // Only faults crash nodes, never a delivered message; still, a stream
    // cleared under us is left alone.
    if (s.generation() != generation) break;
  }
  s.pumping = false;
  if (!s.empty()) schedule_pump(s, s.head().ready);
}

void Network::deliver(Stream& s, Packet p) {
  LOCKSIM_ASSERT(in_flight_ > 0);
  --in_flight_;
  // Pair of Stream::push: arrivals on one stream never go back in time.
  LOCKSIM_ASSERT_MSG(world_.now() >= s.last_arrival, "a stream delivered out of order");
  LOCKSIM_ASSERT_MSG(world_.now() >= p.ready, "a message arrived before its latency allows");
  s.last_arrival = world_.now();
  if (p.connection != 0) {
    const ConnectionRecord& c = record(p.connection);
    const ConnectionState state = c.state;
    const bool to_server = &s.to() == c.server;
    // Bytes a client wrote before closing still reach the server; nothing
    // reaches a socket that is gone.
    if (!(state == ConnectionState::kOpen || (to_server && state == ConnectionState::kClosed))) {
      ++dropped_;
      check_counts();
      return;
    }
  }
  ++arrived_;
  check_counts();
  s.to().deliver(std::move(p.message));
}

void Network::block(Stream& s) {
  LOCKSIM_ASSERT(!s.empty() && !s.blocked);
  s.blocked = true;
  const uint64_t blocks = ++s.blocks;
  const TimePoint limit = s.head().sent + tcp_.retransmission_limit;
  Stream* sp = &s;
  const uint64_t generation = s.generation();
  world_.at(std::max(limit, world_.now()), [this, sp, blocks, generation] {
    if (sp->generation() == generation) give_up(*sp, blocks);
  });
}

void Network::give_up(Stream& s, uint64_t blocks) {
  if (!s.blocked || s.blocks != blocks) return;  // healed in time
  // Pair of block(): the head is the packet that has gone unacknowledged.
  LOCKSIM_ASSERT_MSG(world_.now() >= s.head().sent + tcp_.retransmission_limit,
                     "a stream gave up before its retransmission limit");
  break_connection(s);
}

void Network::break_connection(const Stream& broken) {
  const Node* a = &broken.from();
  const Node* b = &broken.to();
  const uint64_t id = broken.connection();
  for (const StreamKey& k : {StreamKey{a, b, id}, StreamKey{b, a, id}}) {
    Stream* s = stream_index_.find(k);
    if (s == nullptr) continue;
    const size_t n = s->clear();
    LOCKSIM_ASSERT(in_flight_ >= n);
    in_flight_ -= n;
    dropped_ += n;
  }
  check_counts();
  if (id == 0) return;  // the implicit link: its users resync (replication) or time out
  ConnectionRecord& c = record(id);
  if (c.state == ConnectionState::kOpen) notify(id, c, ConnectionState::kBroken);
}

void Network::node_crashed(const Node& node) {
  for (auto& owned : streams_) {
    Stream& s = *owned;
    if (&s.from() != &node && &s.to() != &node) continue;
    const size_t n = s.clear();
    LOCKSIM_ASSERT(in_flight_ >= n);
    in_flight_ -= n;
    dropped_ += n;
  }
  check_counts();
  for (size_t i = 0; i < connections_.size(); ++i) {
    const uint64_t id = i + 1;
    ConnectionRecord& c = connections_[i];
    if (c.state != ConnectionState::kOpen || (c.client != &node && c.server != &node)) continue;
    if (c.client == &node) {
      c.state = ConnectionState::kReset;  // the server side forgets it
      ++reset_;
      continue;
    }
    if (!can_send(*c.server, *c.client)) {
      c.state = ConnectionState::kReset;  // silent until the link heals
      c.reset_unseen = true;
      ++reset_;
      continue;
    }
    notify(id, c, ConnectionState::kReset);
  }
}

void Network::notify(uint64_t id, ConnectionRecord& c, ConnectionState why) {
  LOCKSIM_ASSERT(c.state == ConnectionState::kOpen);
  LOCKSIM_ASSERT(why == ConnectionState::kReset || why == ConnectionState::kBroken);
  c.state = why;
  ++(why == ConnectionState::kReset ? reset_ : broken_);
  // A reset travels back as an RST (one latency); a broken connection is the
  // client's own kernel giving up (now).
  const Duration after =
      why == ConnectionState::kReset ? link(*c.server, *c.client).latency_base : Duration::zero();
  world_.after(after, [this, id, why] {
    const ConnectionRecord& r = record(id);
    if (!r.on_failure) return;
    auto handler = r.on_failure;  // it may replace itself
    handler(why);
  });
}

uint64_t Network::open_connection(Node& client, Node& server) {
  const uint64_t id = next_connection_++;
  connections_.push_back(ConnectionRecord{&client, &server, ConnectionState::kOpen, false, {}});
  // Pair of record(): the new record sits at slot id - 1.
  LOCKSIM_ASSERT(connections_.size() == id);
  return id;
}

Network::ConnectionRecord& Network::record(uint64_t id) {
  LOCKSIM_ASSERT_MSG(id >= 1 && id <= connections_.size(), "an unknown connection");
  return connections_[id - 1];
}

const Network::ConnectionRecord& Network::record(uint64_t id) const {
  LOCKSIM_ASSERT_MSG(id >= 1 && id <= connections_.size(), "an unknown connection");
  return connections_[id - 1];
}

void Network::send_on(uint64_t connection, bool to_server, Callback&& message) {
  ConnectionRecord& c = record(connection);
  const bool writable = c.state == ConnectionState::kOpen;
  if (!writable) return;  // a dead socket takes nothing
  if (to_server) {
    enqueue(*c.client, *c.server, connection, &c.streams[1], std::move(message));
  } else {
    enqueue(*c.server, *c.client, connection, &c.streams[0], std::move(message));
  }
}

void Network::close_connection(uint64_t connection) {
  ConnectionRecord& c = record(connection);
  if (c.state == ConnectionState::kOpen) c.state = ConnectionState::kClosed;
}

ConnectionState Network::connection_state(uint64_t connection) const {
  return record(connection).state;
}

void Network::set_failure_handler(uint64_t connection, FailureHandler handler) {
  record(connection).on_failure = handler;
}

void Network::release_connection(uint64_t connection) {
  close_connection(connection);
  record(connection).on_failure = {};
}

void Network::check_counts() const {
  // Every message sent is, at any moment, in exactly one of three places.
  LOCKSIM_ASSERT_MSG(sent_ == dropped_ + in_flight_ + arrived_, "network message count mismatch");
}

}  // namespace locksim::sim
