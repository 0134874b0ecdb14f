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
  LOCKSIM_ASSERT_MSG(!queue_.empty(), "the head of an empty stream");
  return queue_.front();
}

void Stream::push(Packet p) {
  LOCKSIM_ASSERT_MSG(p.ready >= p.sent, "a packet ready before it was sent");
  LOCKSIM_ASSERT_MSG(queue_.empty() || p.sent >= queue_.back().sent,
                     "packets written out of order");
  LOCKSIM_ASSERT(queue_.size() < kQueuedMax);
  queue_.push_back(std::move(p));
}

Packet Stream::pop() {
  LOCKSIM_ASSERT_MSG(!queue_.empty(), "popping an empty stream");
  Packet p = std::move(queue_.front());
  queue_.pop_front();
  return p;
}

size_t Stream::clear() {
  const size_t n = queue_.size();
  queue_.clear();
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

void Connection::to_server(Callback message) {
  net_.send_on(id_, true, std::move(message));
}

void Connection::to_client(Callback message) {
  net_.send_on(id_, false, std::move(message));
}

void Connection::close() {
  net_.close_connection(id_);
}

void Connection::on_failure(std::function<void(ConnectionState)> handler) {
  net_.set_failure_handler(id_, std::move(handler));
}

}  // namespace locksim::sim
