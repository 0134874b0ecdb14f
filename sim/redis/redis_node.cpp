#include "sim/redis/redis_node.h"

#include <algorithm>
#include <cassert>
#include <cctype>

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
  node_.on_crash = [this] { on_crash(); };
  node_.on_restart = [this] { on_restart(); };
  schedule_active_expiry();
  if (topology_.persistence == Persistence::kAofEverysec) schedule_periodic_save(kFsyncPeriod);
  if (topology_.persistence == Persistence::kRdb) schedule_periodic_save(topology_.rdb_interval);
}

Reply RedisNode::execute(const std::vector<std::string>& argv) {
  ++commands_;
  if (role_ == Role::kReplica) {
    if (!argv.empty() && is_write_command(argv[0])) {
      return Reply::error("READONLY You can't write against a read only replica.");
    }
    // A replica hides logically expired keys but must not delete them on
    // its own clock: run the read, then put back anything lazy expiry removed.
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
  for (RedisNode* r : replicas_) ship(*r, seq, last_shipped_);
}

void RedisNode::ship(RedisNode& replica, uint64_t seq, const Keys& snapshot) {
  sent_[replica.name()] = Sent{seq, world_.now()};
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
  server_->restore(snapshot);
  applied_seq_ = seq;
  if (topology_.persistence == Persistence::kAofAlways) disk_ = server_->keys();
}

void RedisNode::become_master() {
  if (master_ != nullptr) {
    auto& siblings = master_->replicas_;
    siblings.erase(std::remove(siblings.begin(), siblings.end(), this), siblings.end());
  }
  role_ = Role::kMaster;
  master_ = nullptr;
  last_shipped_ = server_->keys();
}

void RedisNode::become_replica_of(RedisNode& master) {
  assert(&master != this);
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
  server_->flush_all();
  ++incarnation_;
}

void RedisNode::on_restart() {
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
  assert(!members_.empty());
  current_ = published_ = members_[0];
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
}

GroupConnection::GroupConnection(World& world, Network& net, Node& client, ReplicaGroup& group,
                                 Duration timeout)
    : world_(world), net_(net), client_(client), group_(group), timeout_(timeout) {}

Reply GroupConnection::command(const std::vector<std::string>& argv) {
  RedisNode* target = &group_.published_master();
  std::optional<Reply> reply = call<Reply>(
      world_, net_, client_, target->node(), [target, argv] { return target->execute(argv); },
      timeout_);
  if (!reply) return Reply::io_error("timeout after " + std::to_string(timeout_.to_ms()) + " ms");
  return std::move(*reply);
}

}  // namespace locksim::sim::redis
