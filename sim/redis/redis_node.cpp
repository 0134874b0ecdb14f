#include "sim/redis/redis_node.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "env/assert.h"
#include "sim/rpc.h"

namespace locksim::sim::redis {

namespace {

// Commands a replica refuses, as redis-server does with replica-read-only yes.
// EVAL/EVALSHA are refused outright: every script locksim's algorithms send
// may write, and Redis refuses a writing script on a replica.
bool is_write_command(const std::string& name) {
  static const char* const kWrites[] = {"set",     "setnx",    "getset",    "del",     "expire",
                                        "pexpire", "expireat", "pexpireat", "persist", "incr",
                                        "decr",    "incrby",   "eval",      "evalsha"};
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return std::any_of(std::begin(kWrites), std::end(kWrites),
                     [&](const char* w) { return lower == w; });
}

}  // namespace

RedisNode::RedisNode(World& world, Network& net, std::string name, uint64_t seed,
                     const Topology& topology, Duration clock_offset)
    : ReplicatedNode(world, net, std::move(name), clock_offset, topology.replication_lag),
      world_(world),
      topology_(topology),
      server_(std::make_unique<Server>(seed)) {
  node().on_crash = [this] { on_crash(); };
  node().on_restart = [this] { on_restart(); };
  schedule_active_expiry();
  if (topology_.persistence == Persistence::kAofEverysec) schedule_periodic_save(kFsyncPeriod);
  if (topology_.persistence == Persistence::kRdb) schedule_periodic_save(topology_.rdb_interval);
}

Reply RedisNode::execute(const std::vector<std::string>& argv) {
  // Commands arrive through Node::deliver, which runs them only when up.
  LOCKSIM_ASSERT_MSG(node().running(), "a command executed on a node that is not running");
  ++commands_;
  if (role() == Role::kReplica) {
    if (!argv.empty() && is_write_command(argv[0])) {
      return Reply::error("READONLY You can't write against a read only replica.");
    }
    // A replica hides logically expired keys but must not delete them on
    // its own clock: run the read, then put back anything lazy expiry removed.
    LOCKSIM_ASSERT(primary() != nullptr);
    Keys before = server_->keys();
    Reply r = server_->execute(argv, node().local_now());
    if (server_->keys() != before) server_->restore(std::move(before));
    return r;
  }
  Reply r = server_->execute(argv, node().local_now());
  after_write();
  return r;
}

void RedisNode::after_write() {
  if (topology_.persistence == Persistence::kAofAlways) disk_ = server_->keys();
  replicate_if_changed(false);
}

void RedisNode::replicate_if_changed(bool force) {
  if (!ships()) return;
  if (!force && server_->keys() == last_shipped_) return;
  last_shipped_ = server_->keys();
  ship_to_replicas(last_shipped_);
}

void RedisNode::install_shipment(const Keys& snapshot, uint64_t /*seq*/) {
  server_->restore(snapshot);
  if (topology_.persistence == Persistence::kAofAlways) disk_ = server_->keys();
}

void RedisNode::on_crash() {
  LOCKSIM_ASSERT(node().crashed());
  server_->flush_all();
  ++incarnation_;
}

void RedisNode::on_restart() {
  LOCKSIM_ASSERT(node().running());
  LOCKSIM_ASSERT_MSG(server_->dbsize() == 0, "a crashed server kept keys in memory");
  server_->restore(disk_);
  if (role() == Role::kPrimary) {
    replicate_if_changed(true);  // replicas resync to whatever came back, even nothing
  } else {
    resync_from_primary();
  }
}

void RedisNode::schedule_active_expiry() {
  world_.after(kActiveExpiryPeriod, [this] {
    if (node().running() && role() == Role::kPrimary) {
      if (!server_->active_expire(node().local_now()).empty()) after_write();
    }
    schedule_active_expiry();
  });
}

void RedisNode::schedule_periodic_save(Duration period) {
  // A zero period would reschedule itself at the same instant forever.
  LOCKSIM_ASSERT_MSG(period > Duration::zero(), "a periodic save needs a positive period");
  world_.after(period, [this, period] {
    if (node().running()) disk_ = server_->keys();
    schedule_periodic_save(period);
  });
}

ReplicaGroup::ReplicaGroup(World& world, Network& net, std::string name,
                           std::vector<RedisNode*> members, Node* sentinel,
                           const Topology& topology)
    : FailoverGroup(
          world, net, std::move(name), std::move(members), sentinel,
          FailoverParams{topology.failover, topology.down_after, topology.discovery_delay}) {}

GroupConnection::GroupConnection(World& world, Network& net, Node& client, ReplicaGroup& group,
                                 Duration timeout)
    : world_(world), net_(net), client_(client), group_(group), timeout_(timeout) {
  // Run validation rejects anything else as bad input (exit 2).
  LOCKSIM_ASSERT(timeout_ > Duration::zero());
}

void GroupConnection::drop_connection() {
  if (conn_) conn_->close();
  conn_.reset();
  conn_target_ = nullptr;
}

std::optional<Reply> GroupConnection::connect(RedisNode& target) {
  LOCKSIM_ASSERT(conn_ == nullptr);
  std::string error;
  conn_ = dial(world_, net_, client_, target.node(), timeout_, error);
  if (!conn_) return Reply::io_error(error);
  conn_target_ = &target;
  // Pair of drop_connection(): a fresh connection is open.
  LOCKSIM_ASSERT(conn_->open());
  return std::nullopt;
}

Reply GroupConnection::command(std::vector<std::string> argv) {
  RedisNode* target = &group_.published_primary();
  if (conn_ && (conn_target_ != target || !conn_->open())) drop_connection();
  if (!conn_) {
    if (std::optional<Reply> failed = connect(*target)) return std::move(*failed);
  }
  CallResult<Reply> r = call<Reply>(
      world_, *conn_, [target, argv = std::move(argv)] { return target->execute(argv); }, timeout_);
  switch (r.outcome) {
    case CallOutcome::kReply:
      // io_error means "no reply": a server never answers with one.
      LOCKSIM_ASSERT_MSG(!r.reply->is_io_error(), "a server replied with a transport error");
      return std::move(*r.reply);
    case CallOutcome::kTimeout:
      drop_connection();
      return Reply::io_error("timeout after " + std::to_string(timeout_.to_ms()) + " ms");
    case CallOutcome::kReset:
      drop_connection();
      return Reply::io_error("connection reset by peer");
    case CallOutcome::kBroken:
      drop_connection();
      return Reply::io_error("connection timed out (retransmission limit)");
  }
  return Reply::io_error("unreachable");
}

}  // namespace locksim::sim::redis
