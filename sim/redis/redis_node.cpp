#include "sim/redis/redis_node.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "env/argv_pool.h"
#include "env/assert.h"
#include "sim/redis/command_util.h"
#include "sim/rpc.h"

namespace locksim::sim::redis {

namespace {

// Commands a replica refuses, as redis-server does with replica-read-only yes.
// EVAL/EVALSHA are refused outright: every script locksim's algorithms send
// may write, and Redis refuses a writing script on a replica. (What reaches
// the replicas is not this list but the keyspace shipments: any change ships.)
bool is_write_command(const std::string& name) {
  static const char* const kWrites[] = {
      "set",     "setnx", "getset", "del",    "expire", "pexpire", "expireat", "pexpireat",
      "persist", "incr",  "decr",   "incrby", "eval",   "evalsha", "hset",     "hdel",
      "hincrby", "rpush", "lpop",   "lrem",   "zadd",   "zincrby", "zrem"};
  return std::any_of(std::begin(kWrites), std::end(kWrites),
                     [&](const char* w) { return equals_ignoring_case(name, w); });
}

}  // namespace

RedisNode::RedisNode(World& world, Network& net, std::string name, uint64_t seed,
                     const Topology& topology, Duration clock_offset)
    : ReplicatedNode(world, net, std::move(name), clock_offset, topology.replication_lag),
      world_(world),
      net_(net),
      topology_(topology),
      server_(std::make_unique<Server>(seed)) {
  world_.count_changes_of(server_->keys_version_count());
  server_->set_publication_sink(
      [this](const Server::Publication& publication) { publications_.push_back(publication); });
  node().on_crash = [this] { on_crash(); };
  node().on_restart = [this] { on_restart(); };
  schedule_active_expiry();
  if (topology_.persistence == Persistence::kAofEverysec) schedule_periodic_save(kFsyncPeriod);
  if (topology_.persistence == Persistence::kRdb) schedule_periodic_save(topology_.rdb_interval);
}

bool RedisNode::is_blocking_command(const std::string& name) {
  // Asked of every command a client sends: compared in place, no copy.
  return equals_ignoring_case(name, "wait");
}

void RedisNode::execute_blocking(const std::vector<std::string>& argv, uint64_t client,
                                 Respond respond) {
  if (argv.empty() || !is_blocking_command(argv[0])) {
    respond(execute(argv, client));
    return;
  }
  block_wait(argv, client, std::move(respond));
}

Reply RedisNode::execute(const std::vector<std::string>& argv, uint64_t client) {
  // Commands arrive through Node::deliver, which runs them only when up.
  LOCKSIM_ASSERT_MSG(node().running(), "a command executed on a node that is not running");
  forget_closed_subscribers();
  if (!argv.empty() && is_blocking_command(argv[0])) {
    ++commands_;
    std::optional<Reply> now = wait_now(argv, client);
    // A client that may not block gets the count as it stands.
    return now ? std::move(*now) : Reply::integer_reply(count_acks(offset_of(client)));
  }
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
    propagate_publications();  // a replica's own PUBLISH stays here, as in Redis
    return r;
  }
  const uint64_t shipped_before = shipped_seq();
  Reply r = server_->execute(argv, node().local_now());
  after_write();
  if (shipped_seq() != shipped_before) note_client_write(client);
  propagate_publications();
  return r;
}

void RedisNode::propagate_publications() {
  if (publications_.empty()) return;
  std::vector<Server::Publication> published = std::move(publications_);
  publications_.clear();
  for (const Server::Publication& publication : published) {
    if (on_publication) on_publication(publication);
    deliver(publication);
    if (!ships()) continue;
    for (RedisNode* replica : replicas()) {
      send_along_stream(*replica, [this, replica, publication] {
        replica->replay_publication(this, publication);
      });
    }
  }
}

void RedisNode::replay_publication(const RedisNode* from, const Server::Publication& publication) {
  // Only from the master this replica follows now (a message from a former
  // one, still on the wire, belongs to a stream it has left).
  if (role() != Role::kReplica || primary() != from) return;
  forget_closed_subscribers();
  server_->publish(publication.channel, publication.message);
  propagate_publications();  // delivers here; a replica does not propagate
}

void RedisNode::send_along_stream(RedisNode& replica, Callback message) {
  const uint64_t incarnation = incarnation_;
  RedisNode* target = &replica;
  world_.after(topology_.replication_lag, [this, target, incarnation,
                                           message = std::move(message)]() mutable {
    node().deliver([this, target, incarnation, message = std::move(message)]() mutable {
      if (incarnation_ != incarnation || role() != Role::kPrimary) return;
      net_.send(node(), target->node(), std::move(message));
    });
  });
}

void RedisNode::after_write() {
  if (topology_.persistence == Persistence::kAofAlways) save_to_disk();
  replicate_if_changed(false);
}

void RedisNode::save_to_disk() {
  if (disk_version_ == server_->keys_version()) return;  // disk_ holds these keys already
  disk_ = server_->keys();
  disk_version_ = server_->keys_version();
}

void RedisNode::replicate_if_changed(bool force) {
  if (!ships()) return;
  // Unmoved since the last shipment (or the last comparison), the keys are
  // what was shipped: no need to compare them key by key.
  if (!force && shipped_version_ == server_->keys_version()) return;
  shipped_version_ = server_->keys_version();
  if (!force && server_->keys() == last_shipped_) return;
  last_shipped_ = server_->keys();
  ship_to_replicas(last_shipped_);
}

void RedisNode::install_shipment(const Keys& snapshot, uint64_t /*seq*/) {
  server_->restore(snapshot);
  if (topology_.persistence == Persistence::kAofAlways) save_to_disk();
}

void RedisNode::on_crash() {
  LOCKSIM_ASSERT(node().crashed());
  server_->flush_all();
  ++incarnation_;
  publications_.clear();
  inboxes_.clear();  // flush_all forgot their subscriptions
  // The process died with its clients: their connections were reset, so no
  // blocked WAIT is answered. Its master sees the replication link reset.
  drop_master_state(false);
  if (role() == Role::kReplica && primary() != nullptr) primary()->forget_replica_ack(name());
}

void RedisNode::on_promoted() {
  last_shipped_ = server_->keys();
  shipped_version_ = server_->keys_version();
  drop_master_state(false);  // a replica has no WAIT state; nothing stale either
}

void RedisNode::on_following(bool was_primary) {
  // Called before the switch: primary() is still the master being left.
  if (primary() != nullptr) primary()->forget_replica_ack(name());
  if (was_primary) drop_master_state(true);
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
    if (node().running()) save_to_disk();
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

Duration GroupConnection::blocking_timeout(const std::vector<std::string>& argv) const {
  // WAIT numreplicas timeout-ms: the client's own timeout plus the time the
  // server may block (Redisson's synced lock write waits responseTimeout +
  // syncTimeout). A timeout the server would reject, or 0 ("forever"), adds
  // nothing: the client's timeout still bounds the call.
  int64_t block_ms = 0;
  if (argv.size() == 3) {
    const auto [end, error] =
        std::from_chars(argv[2].data(), argv[2].data() + argv[2].size(), block_ms);
    if (error != std::errc() || end != argv[2].data() + argv[2].size() || block_ms < 0 ||
        block_ms >= RedisNode::kWaitForeverMax.to_ms()) {
      block_ms = 0;
    }
  }
  LOCKSIM_ASSERT(block_ms >= 0);
  if (timeout_ == kNoTimeout) return kNoTimeout;
  return timeout_ + Duration::millis(block_ms);
}

Reply GroupConnection::command(std::vector<std::string> argv) {
  RedisNode* target = &group_.published_primary();
  if (conn_ && (conn_target_ != target || !conn_->open())) drop_connection();
  if (!conn_) {
    if (std::optional<Reply> failed = connect(*target)) return std::move(*failed);
  }
  const uint64_t client = conn_->id();
  // Blocking commands (WAIT) answer later, from the node; the others answer at once.
  const bool blocking = !argv.empty() && RedisNode::is_blocking_command(argv[0]);
  const Duration timeout = blocking ? blocking_timeout(argv) : timeout_;
  CallResult<Reply> r =
      blocking ? call_deferred<Reply>(
                     world_, *conn_,
                     [target, argv = std::move(argv), client](RedisNode::Respond respond) {
                       target->execute_blocking(argv, client, std::move(respond));
                     },
                     timeout)
               : call<Reply>(
                     world_, *conn_,
                     [target, argv = std::move(argv), client]() mutable {
                       Reply reply = target->execute(argv, client);
                       argv_pool::give_back(std::move(argv));  // the server is done with it
                       return reply;
                     },
                     timeout_);
  switch (r.outcome) {
    case CallOutcome::kReply:
      // io_error means "no reply": a server never answers with one.
      LOCKSIM_ASSERT_MSG(!r.reply->is_io_error(), "a server replied with a transport error");
      return std::move(*r.reply);
    case CallOutcome::kTimeout:
      drop_connection();
      return Reply::io_error("timeout after " + std::to_string(timeout.to_ms()) + " ms");
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
