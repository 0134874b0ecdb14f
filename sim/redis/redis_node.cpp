#include "sim/redis/redis_node.h"

#include <algorithm>
#include <cctype>

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
    : world_(world),
      net_(net),
      node_(world, std::move(name), clock_offset),
      topology_(topology),
      server_(std::make_unique<Server>(seed)) {
  // Run validation rejects these as bad input (exit 2); a negative lag would
  // schedule into the past.
  LOCKSIM_ASSERT(topology_.replication_lag >= Duration::zero());
  node_.on_crash = [this] { on_crash(); };
  node_.on_restart = [this] { on_restart(); };
  schedule_active_expiry();
  if (topology_.persistence == Persistence::kAofEverysec) schedule_periodic_save(kFsyncPeriod);
  if (topology_.persistence == Persistence::kRdb) schedule_periodic_save(topology_.rdb_interval);
}

Reply RedisNode::execute(const std::vector<std::string>& argv) {
  // Commands arrive through Node::deliver, which runs them only when up.
  LOCKSIM_ASSERT_MSG(node_.running(), "a command executed on a node that is not running");
  ++commands_;
  if (role_ == Role::kReplica) {
    if (!argv.empty() && is_write_command(argv[0])) {
      return Reply::error("READONLY You can't write against a read only replica.");
    }
    // A replica hides logically expired keys but must not delete them on
    // its own clock: run the read, then put back anything lazy expiry removed.
    LOCKSIM_ASSERT(master_ != nullptr);
    Keys before = server_->keys();
    Reply r = server_->execute(argv, node_.local_now());
    if (server_->keys() != before) server_->restore(std::move(before));
    return r;
  }
  Reply r = server_->execute(argv, node_.local_now());
  after_write();
  return r;
}

void RedisNode::after_write() {
  if (topology_.persistence == Persistence::kAofAlways) disk_ = server_->keys();
  replicate_if_changed(false);
}

void RedisNode::replicate_if_changed(bool force) {
  if (role_ != Role::kMaster || replicas_.empty()) return;
  if (!force && server_->keys() == last_shipped_) return;
  last_shipped_ = server_->keys();
  const uint64_t seq = ++shipped_seq_;
  for (RedisNode* r : replicas_) {
    // Pair of become_replica_of: a master's replica list and its replicas'
    // master pointers agree.
    LOCKSIM_ASSERT_MSG(r->master_ == this && r->role_ == Role::kReplica,
                       "a master ships to a node that does not follow it");
    ship(*r, seq, last_shipped_);
  }
}

void RedisNode::ship(RedisNode& replica, uint64_t seq, const Keys& snapshot) {
  LOCKSIM_ASSERT_MSG(&replica != this, "a node ships to itself");
  // Every shipment carries the newest number this node has handed out, and
  // each replica sees its numbers rise.
  LOCKSIM_ASSERT_MSG(seq == shipped_seq_, "a shipment with a stale sequence number");
  Sent& sent = sent_[replica.name()];
  LOCKSIM_ASSERT_MSG(seq > sent.seq, "shipment numbers to a replica went back");
  sent = Sent{seq, world_.now()};
  const uint64_t incarnation = incarnation_;
  RedisNode* target = &replica;
  world_.after(topology_.replication_lag, [this, target, seq, snapshot, incarnation] {
    // Sent from the master's process: a paused master sends on resume, a
    // crashed one never (its output buffer died with it).
    node_.deliver([this, target, seq, snapshot, incarnation] {
      if (incarnation_ != incarnation || role_ != Role::kMaster) return;
      net_.send(node_, target->node_,
                [this, target, seq, snapshot] { target->apply_shipment(this, seq, snapshot); });
    });
  });
}

void RedisNode::apply_shipment(const RedisNode* from, uint64_t seq, const Keys& snapshot) {
  if (role_ != Role::kReplica || master_ != from || seq <= applied_seq_) return;
  // Pair of ship(): a replica never gets ahead of what its master numbered.
  LOCKSIM_ASSERT_MSG(seq <= from->shipped_seq_, "a replica applied an unnumbered shipment");
  LOCKSIM_ASSERT(node_.running());
  server_->restore(snapshot);
  applied_seq_ = seq;
  if (topology_.persistence == Persistence::kAofAlways) disk_ = server_->keys();
}

void RedisNode::become_master() {
  // Only a replica is promoted (the group picks among its replicas).
  LOCKSIM_ASSERT_MSG(role_ == Role::kReplica, "promoting a node that is not a replica");
  if (master_ != nullptr) {
    auto& siblings = master_->replicas_;
    siblings.erase(std::remove(siblings.begin(), siblings.end(), this), siblings.end());
  }
  role_ = Role::kMaster;
  master_ = nullptr;
  last_shipped_ = server_->keys();
  LOCKSIM_ASSERT(replicas_.empty());  // a replica has none; followers are re-pointed by the group
}

void RedisNode::become_replica_of(RedisNode& master) {
  LOCKSIM_ASSERT_MSG(&master != this, "a node made a replica of itself");
  // Chains are not modelled: a node follows only a master.
  LOCKSIM_ASSERT_MSG(master.role_ == Role::kMaster, "a node made a replica of a replica");
  if (master_ != nullptr && master_ != &master) {
    auto& siblings = master_->replicas_;
    siblings.erase(std::remove(siblings.begin(), siblings.end(), this), siblings.end());
  }
  // A demoted master forgets its own replicas; they are re-pointed by the group.
  replicas_.clear();
  role_ = Role::kReplica;
  master_ = &master;
  applied_seq_ = 0;
  if (std::find(master.replicas_.begin(), master.replicas_.end(), this) == master.replicas_.end()) {
    master.replicas_.push_back(this);
  }
  LOCKSIM_ASSERT(std::count(master.replicas_.begin(), master.replicas_.end(), this) == 1);
  // Full resync: the replica's keyspace is replaced by the master's.
  master.ship(*this, ++master.shipped_seq_, master.server_->keys());
}

void RedisNode::resync_if_behind(RedisNode& replica) {
  if (role_ != Role::kMaster || replica.master_ != this) return;
  auto it = sent_.find(replica.name());
  if (it == sent_.end() || replica.applied_seq_ >= it->second.seq) return;
  if (world_.now() - it->second.at < topology_.replication_lag + kResyncGrace) return;
  ship(replica, ++shipped_seq_, server_->keys());
}

void RedisNode::on_crash() {
  LOCKSIM_ASSERT(node_.crashed());
  server_->flush_all();
  ++incarnation_;
}

void RedisNode::on_restart() {
  LOCKSIM_ASSERT(node_.running());
  LOCKSIM_ASSERT_MSG(server_->dbsize() == 0, "a crashed server kept keys in memory");
  server_->restore(disk_);
  if (role_ == Role::kMaster) {
    replicate_if_changed(true);  // replicas resync to whatever came back, even nothing
  } else if (master_ != nullptr) {
    applied_seq_ = 0;
    master_->ship(*this, ++master_->shipped_seq_, master_->server_->keys());
  }
}

void RedisNode::schedule_active_expiry() {
  world_.after(kActiveExpiryPeriod, [this] {
    if (node_.running() && role_ == Role::kMaster) {
      if (!server_->active_expire(node_.local_now()).empty()) after_write();
    }
    schedule_active_expiry();
  });
}

void RedisNode::schedule_periodic_save(Duration period) {
  // A zero period would reschedule itself at the same instant forever.
  LOCKSIM_ASSERT_MSG(period > Duration::zero(), "a periodic save needs a positive period");
  world_.after(period, [this, period] {
    if (node_.running()) disk_ = server_->keys();
    schedule_periodic_save(period);
  });
}

ReplicaGroup::ReplicaGroup(World& world, Network& net, std::string name,
                           std::vector<RedisNode*> members, Node* sentinel,
                           const Topology& topology)
    : world_(world),
      net_(net),
      name_(std::move(name)),
      members_(std::move(members)),
      sentinel_(sentinel),
      topology_(topology) {
  LOCKSIM_ASSERT_MSG(!members_.empty(), "a replica group needs a master");
  LOCKSIM_ASSERT(topology_.down_after > Duration::zero() &&
                 topology_.discovery_delay >= Duration::zero());
  current_ = published_ = members_[0];
  LOCKSIM_ASSERT(current_->role() == RedisNode::Role::kMaster);
  for (size_t i = 1; i < members_.size(); ++i) members_[i]->become_replica_of(*current_);
  if (members_.size() > 1) world_.after(kCheckPeriod, [this] { check(); });
}

bool ReplicaGroup::reachable(RedisNode& n) const {
  return n.node().running() && (sentinel_ == nullptr || net_.connected(*sentinel_, n.node()));
}

void ReplicaGroup::check() {
  world_.after(kCheckPeriod, [this] { check(); });
  if (reachable(*current_)) {
    master_down_since_.reset();
  } else if (!master_down_since_) {
    master_down_since_ = world_.now();
  }
  if (topology_.failover && master_down_since_ &&
      world_.now() - *master_down_since_ >= topology_.down_after) {
    // Promote the reachable replica that has applied the most.
    RedisNode* best = nullptr;
    for (RedisNode* m : members_) {
      if (m == current_ || !reachable(*m) || m->role() != RedisNode::Role::kReplica) continue;
      if (best == nullptr || m->applied_seq() > best->applied_seq()) best = m;
    }
    if (best != nullptr) {
      best->become_master();
      current_ = best;
      master_down_since_.reset();
      const int failover = ++failovers_;
      world_.after(topology_.discovery_delay, [this, best, failover] {
        if (failovers_ == failover) published_ = best;
      });
    }
  }
  // Anyone reachable who is not following the current master is told to:
  // this is how a returning old master becomes a replica and loses the
  // writes the new master never saw.
  for (RedisNode* m : members_) {
    if (m == current_ || !reachable(*m) || !reachable(*current_)) continue;
    if (m->role() == RedisNode::Role::kMaster || m->master() != current_) {
      m->become_replica_of(*current_);
    } else if (net_.connected(current_->node(), m->node())) {
      current_->resync_if_behind(*m);  // a replica back from a partition catches up
    }
  }
  check_roles();
}

void ReplicaGroup::check_roles() const {
  // One master per group, as far as anyone can reach: the current master is
  // a master, and every member reachable along with it follows it. (An old
  // master cut off from the sentinel still believes it leads until it is
  // reachable again and demoted: split brain is what failover tests show.)
  LOCKSIM_ASSERT_MSG(current_->role() == RedisNode::Role::kMaster, "the group's master is not one");
  LOCKSIM_ASSERT(std::count(members_.begin(), members_.end(), published_) == 1);
  if (!reachable(*current_)) return;
  for (RedisNode* m : members_) {
    if (m == current_ || !reachable(*m)) continue;
    LOCKSIM_ASSERT_MSG(m->role() == RedisNode::Role::kReplica && m->master() == current_,
                       "two masters in one group");
  }
}

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

Reply GroupConnection::command(const std::vector<std::string>& argv) {
  RedisNode* target = &group_.published_master();
  if (conn_ && (conn_target_ != target || !conn_->open())) drop_connection();
  if (!conn_) {
    if (std::optional<Reply> failed = connect(*target)) return std::move(*failed);
  }
  CallResult<Reply> r = call<Reply>(
      world_, *conn_, [target, argv] { return target->execute(argv); }, timeout_);
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
