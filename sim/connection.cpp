#include "sim/connection.h"

#include <algorithm>

#include "env/assert.h"
#include "sim/network.h"

namespace locksim::sim {

bool valid(const TcpParams& p) {
  return p.rto_min > Duration::zero() && p.rto_max >= p.rto_min &&
         p.retransmission_limit > Duration::zero() &&
         p.connect_timeout_default > Duration::zero() && p.loss_redraws_max >= 0;
}

std::optional<TimePoint> next_retransmission(TimePoint first_sent, TimePoint at,
                                             const TcpParams& p) {
  LOCKSIM_ASSERT_MSG(at >= first_sent, "a retransmission asked for before the first send");
  LOCKSIM_ASSERT(valid(p));
  const TimePoint limit = first_sent + p.retransmission_limit;
  // Transmissions leave at first_sent, then after rto_min, 2 rto_min, ...
  // (capped at rto_max) each: at most a few dozen steps before the limit.
  TimePoint t = first_sent;
  Duration rto = p.rto_min;
  while (t < at) {
    t = t + rto;
    rto = std::min(rto * 2, p.rto_max);
  }
  if (t > limit) return std::nullopt;
  // Pair of the loop: the answer is never before the time asked about.
  LOCKSIM_ASSERT(t >= at);
  return t;
}

const Packet& Stream::head() const {
  LOCKSIM_ASSERT_MSG(count_ > 0, "the head of an empty stream");
  return slots_[head_];
}

void Stream::push(Packet&& p) {
  LOCKSIM_ASSERT_MSG(p.ready >= p.sent, "a packet ready before it was sent");
  const size_t mask = slots_.size() - 1;
  LOCKSIM_ASSERT_MSG(count_ == 0 || p.sent >= slots_[(head_ + count_ - 1) & mask].sent,
                     "packets written out of order");
  LOCKSIM_ASSERT(count_ < kQueuedMax);
  if (count_ == slots_.size()) {
    // Full: double, moving the live packets to the front in their order.
    std::vector<Packet> grown(std::max<size_t>(4, 2 * slots_.size()));
    for (size_t i = 0; i < count_; ++i) grown[i] = std::move(slots_[(head_ + i) & mask]);
    slots_ = std::move(grown);
    head_ = 0;
  }
  // Pair of the growth: a power of two, so `& mask` wraps.
  LOCKSIM_ASSERT((slots_.size() & (slots_.size() - 1)) == 0 && count_ < slots_.size());
  slots_[(head_ + count_) & (slots_.size() - 1)] = std::move(p);
  ++count_;
}

Packet Stream::pop() {
  LOCKSIM_ASSERT_MSG(count_ > 0, "popping an empty stream");
  Packet p = std::move(slots_[head_]);
  head_ = (head_ + 1) & (slots_.size() - 1);
  --count_;
  return p;
}

size_t Stream::clear() {
  const size_t n = count_;
  // What was held dies now, as the deque's clear() destroyed it.
  for (size_t i = 0; i < count_; ++i) slots_[(head_ + i) & (slots_.size() - 1)] = Packet{};
  head_ = 0;
  count_ = 0;
  ++generation_;
  pump_scheduled = false;
  blocked = false;
  return n;
}

const char* to_string(ConnectionState s) {
  switch (s) {
    case ConnectionState::kOpen:
      return "open";
    case ConnectionState::kClosed:
      return "closed";
    case ConnectionState::kReset:
      return "reset";
    case ConnectionState::kBroken:
      return "broken";
  }
  return "?";
}

Connection::Connection(Network& net, Node& client, Node& server)
    : net_(net),
      net_alive_(net.lifetime()),
      client_(&client),
      server_(&server),
      id_(net.open_connection(client, server)) {
  LOCKSIM_ASSERT(id_ != 0);
}

Connection::~Connection() {
  if (!net_alive_.expired()) net_.release_connection(id_);
}

ConnectionState Connection::state() const {
  return net_.connection_state(id_);
}

void Connection::to_server(Callback&& message) {
  net_.send_on(id_, true, std::move(message));
}

void Connection::to_client(Callback&& message) {
  net_.send_on(id_, false, std::move(message));
}

void Connection::close() {
  net_.close_connection(id_);
}

void Connection::on_failure(FailureHandler handler) {
  net_.set_failure_handler(id_, handler);
}

}  // namespace locksim::sim
