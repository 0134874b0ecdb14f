// WAIT numreplicas timeout on a simulated Redis master (replication.c's
// waitCommand, replicationRequestAckFromSlaves, processClientsWaitingReplicas
// of Redis 7.0), modelled on the shipments of sim/replication.h.
//
// Offsets: Redis counts bytes of its replication stream; here the stream is
// a sequence of numbered keyspace shipments, so an offset is a shipment's
// number. A client's write offset is the number of the shipment its last
// write caused; a replica's acknowledgement is the number of the last
// shipment it applied (a full resync carries a newer number and the whole
// keyspace, so it covers every earlier write).
//
// What is simplified, and why:
//   - Replicas acknowledge only when asked (GETACK when a WAIT blocks, then
//     every kAckPeriod while any WAIT blocks), not every second on their own:
//     unasked acknowledgements would add messages, and network draws, to
//     every run with replicas, and change histories that never use WAIT. So a
//     WAIT that would have found a fresh enough periodic ack in Redis blocks
//     here for one GETACK round trip first, and a replica that has never
//     acknowledged does not count even for a client that never wrote (Redis
//     counts every online replica then).
//   - A command that changes nothing ships nothing and so does not move the
//     client's offset (Redis propagates, for instance, a SET to the same
//     value); neither does PUBLISH, which rides the stream unnumbered.
//   - The timeout runs on true time, not the master's drifting clock.
//   - A replica's crash reaches its master at once (the RST of its link); a
//     partitioned replica keeps its last acknowledgement, as Redis keeps the
//     replica until repl-timeout.
#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include "env/assert.h"
#include "sim/redis/redis_node.h"

namespace locksim::sim::redis {

namespace {

const char kReplicaWait[] =
    "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a "
    "replica is configured to be writable (which is not the default) writes to replicas are just "
    "local and are not propagated.";
const char kUnblocked[] =
    "UNBLOCKED force unblock from blocking operation, instance state changed (master -> "
    "replica?)";

}  // namespace

std::optional<Reply> RedisNode::wait_now(const std::vector<std::string>& argv, uint64_t client) {
  // Arity first (processCommand), then waitCommand's replica check, then
  // its arguments: the server gives the first and the last texts.
  if (argv.size() != 3) return server_->execute(argv, node().local_now());
  if (role() == Role::kReplica) return Reply::error(kReplicaWait);
  const auto parsed = Server::parse_wait(argv);
  if (const Reply* error = std::get_if<Reply>(&parsed)) return *error;
  const auto& request = std::get<Server::WaitRequest>(parsed);
  const int64_t acked = count_acks(offset_of(client));
  if (acked >= request.numreplicas) return Reply::integer_reply(acked);
  return std::nullopt;
}

void RedisNode::block_wait(const std::vector<std::string>& argv, uint64_t client, Respond respond) {
  LOCKSIM_ASSERT_MSG(node().running(), "a command executed on a node that is not running");
  ++commands_;
  if (std::optional<Reply> now = wait_now(argv, client)) {
    respond(std::move(*now));
    return;
  }
  // wait_now blocks only for a well-formed WAIT on a master.
  const auto request = std::get<Server::WaitRequest>(Server::parse_wait(argv));
  LOCKSIM_ASSERT(role() == Role::kPrimary);
  const uint64_t offset = offset_of(client);
  forget_closed_clients();
  if (waiters_.size() >= kBlockedWaitsMax) {
    respond(Reply::integer_reply(count_acks(offset)));  // see kBlockedWaitsMax
    return;
  }
  const uint64_t id = ++waiters_blocked_;
  waiters_.emplace(id, Waiter{client, offset, request.numreplicas, std::move(respond)});
  const Duration timeout = request.timeout_ms == 0 || request.timeout_ms >= kWaitForeverMax.to_ms()
                               ? kWaitForeverMax
                               : Duration::millis(request.timeout_ms);
  const uint64_t incarnation = incarnation_;
  world_.after(timeout, [this, id, incarnation] {
    // The reply leaves from the process: a paused master answers on resume.
    node().deliver([this, id, incarnation] {
      if (incarnation_ == incarnation) finish_wait(id);
    });
  });
  request_acks();
}

uint64_t RedisNode::offset_of(uint64_t client) const {
  const auto it = client_offsets_.find(client);
  return it == client_offsets_.end() ? 0 : it->second;  // never wrote: offset 0
}

int64_t RedisNode::count_acks(uint64_t offset) const {
  int64_t acked = 0;
  for (const RedisNode* replica : replicas()) {
    const auto it = replica_acks_.find(replica->name());
    if (it != replica_acks_.end() && it->second >= offset) ++acked;
  }
  return acked;
}

void RedisNode::note_client_write(uint64_t client) {
  // Only a master with replicas numbers shipments.
  LOCKSIM_ASSERT(role() == Role::kPrimary && shipped_seq() > 0);
  client_offsets_[client] = shipped_seq();
  if (client_offsets_.size() > kClientOffsetsMax) forget_closed_clients();
}

void RedisNode::request_acks() {
  // One round per instant, however many WAITs block in it (Redis sends
  // GETACK once per event loop iteration).
  if (acks_requested_at_ == world_.now()) return;
  acks_requested_at_ = world_.now();
  const uint64_t incarnation = incarnation_;
  for (RedisNode* replica : replicas()) {
    send_along_stream(*replica,
                      [this, replica, incarnation] { replica->on_getack(this, incarnation); });
  }
  if (ack_timer_armed_) return;
  ack_timer_armed_ = true;
  const uint64_t epoch = ack_timer_epoch_;
  world_.after(kAckPeriod, [this, epoch] {
    node().deliver([this, epoch] {
      if (ack_timer_epoch_ != epoch) return;  // a crash or a demotion disarmed it
      ack_timer_armed_ = false;
      forget_closed_clients();
      if (role() == Role::kPrimary && !waiters_.empty()) request_acks();
    });
  });
}

void RedisNode::on_getack(const RedisNode* from, uint64_t from_incarnation) {
  if (role() != Role::kReplica || primary() != from) return;
  RedisNode* master = primary();
  const uint64_t applied = applied_seq();
  net_.send(node(), master->node(), [master, this, applied, from_incarnation] {
    master->on_ack(this, applied, from_incarnation);
  });
}

void RedisNode::on_ack(const RedisNode* replica, uint64_t applied, uint64_t incarnation) {
  // An ack to a GETACK of an earlier life, or from a node that left, says
  // nothing about this master's stream now.
  if (incarnation != incarnation_ || role() != Role::kPrimary || replica->primary() != this) {
    return;
  }
  // Pair of ship(): nobody applies a number its master did not hand out.
  LOCKSIM_ASSERT_MSG(applied <= shipped_seq(), "a replica acknowledged an unsent shipment");
  uint64_t& acked = replica_acks_[replica->name()];
  acked = std::max(acked, applied);
  unblock_acknowledged();
}

void RedisNode::unblock_acknowledged() {
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    const int64_t acked = count_acks(it->second.offset);
    if (acked < it->second.numreplicas) {
      ++it;
      continue;
    }
    Respond respond = std::move(it->second.respond);
    it = waiters_.erase(it);
    respond(Reply::integer_reply(acked));
  }
}

void RedisNode::finish_wait(uint64_t id) {
  const auto it = waiters_.find(id);
  if (it == waiters_.end()) return;  // answered already
  Respond respond = std::move(it->second.respond);
  const int64_t acked = count_acks(it->second.offset);
  waiters_.erase(it);
  respond(Reply::integer_reply(acked));
}

void RedisNode::forget_closed_clients() {
  // Connection 0 is no connection (a test's direct call): never closed.
  auto closed = [this](uint64_t client) {
    return client != 0 && net_.connection_state(client) != ConnectionState::kOpen;
  };
  std::erase_if(waiters_, [&](const auto& w) { return closed(w.second.client); });
  std::erase_if(client_offsets_, [&](const auto& c) { return closed(c.first); });
}

void RedisNode::forget_replica_ack(const std::string& name) {
  replica_acks_.erase(name);
}

void RedisNode::drop_master_state(bool unblock_waiters) {
  std::map<uint64_t, Waiter> waiters = std::move(waiters_);
  waiters_.clear();
  if (unblock_waiters) {
    for (auto& [id, waiter] : waiters) waiter.respond(Reply::error(kUnblocked));
  }
  client_offsets_.clear();
  replica_acks_.clear();
  acks_requested_at_.reset();
  ack_timer_armed_ = false;
  ++ack_timer_epoch_;
}

}  // namespace locksim::sim::redis
