// Asynchronous primary-replica replication and its failover monitor: the one
// shape the Redis and MySQL backends share (a Redis master and its replicas,
// sim/redis/redis_node.h; a MySQL primary and its binlog replicas,
// sim/mysql/mysql_node.h). Each backend says what it ships and how a replica
// installs it; the sequence numbers, the timers and the role changes live here.
//
//   - ReplicatedNode (a base of the backend's node): a lagged FIFO shipper. A
//     primary ships its whole state (the Payload: Redis's keyspace, MySQL's
//     committed table) to a replica replication_lag after a change, stamped
//     with a sequence number that only it hands out; a replica applies only
//     newer numbers, so it is always a consistent prefix of its primary's
//     history. A shipment leaves from the primary's process when the lag is up:
//     a paused primary sends on resume, a crashed or demoted one never (its
//     output buffer died with it). It then travels on the two nodes' peer link
//     (Network::send: FIFO, held by a partition). A shipment lost to a broken
//     link is made good by a full resync once the link is back
//     (resync_if_behind, driven by the group).
//   - FailoverGroup: every kCheckPeriod the observer node (Sentinel, the MySQL
//     monitor) looks at the members it can reach. After the primary has been
//     unreachable for down_after, the reachable replica that has applied the
//     most is promoted; clients are told discovery_delay later (DNS, a proxy, a
//     VIP moving, Sentinel's clients asking again). Any reachable member not
//     following the current primary is made to ("last failover wins": a
//     returning old primary loses the writes the new one never saw); a replica
//     back from a partition is resynced.
//
// Determinism: the order in which timers are scheduled is part of every
// history (the event queue breaks ties by insertion order), so each function
// here schedules exactly what it documents, in that order.
//
// Why a template and not virtual calls: the payload is a value type that each
// shipment copies into its timer, and a group holds nodes of one backend only;
// Self (the backend's node) is known at compile time and is what the accessors
// return. All on the simulation's one thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "env/assert.h"
#include "env/time.h"
#include "sim/change_count.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/world.h"

namespace locksim::sim {

enum class ReplicationRole { kPrimary, kReplica };  // Redis's master is the primary

// One node of a replication group. Self derives from ReplicatedNode<Self,
// Payload>, befriends it, and provides these (each called at the node, on the
// simulation's thread):
//   uint64_t incarnation() const;     bumped at least by each crash: a
//                                     shipment from an older one is not sent
//   Payload shipment() const;         primary: its whole state now (may
//                                     return a reference)
//   void install_shipment(const Payload&, uint64_t seq);
//                                     replica: replace the state by a
//                                     shipment (applied_seq() is already seq)
//   void on_promoted();               after become_primary() took the role
//   void on_following(bool was_primary);
//                                     in become_replica_of(), before the node
//                                     joins its new primary
template <typename Self, typename Payload>
class ReplicatedNode {
 public:
  using Role = ReplicationRole;

  Node& node() { return node_; }
  const Node& node() const { return node_; }
  const std::string& name() const { return node_.name(); }
  Role role() const { return role_; }
  Self* primary() const { return primary_; }  // when a replica, else nullptr
  // Replica: the last shipment applied (its primary's numbering); 0 after
  // joining or restarting, until the full resync lands.
  uint64_t applied_seq() const { return applied_seq_; }

  // Role changes, made by the group's failover logic. Preconditions
  // (asserted): only a replica is promoted; a node follows a primary other
  // than itself, and only a primary (chains are not modelled).
  // become_replica_of discards whatever this node has that `primary` does
  // not by taking a full copy from it (a shipment scheduled now).
  void become_primary();
  void become_replica_of(Self& primary);
  // Primary side of a reconnecting replica: if the last shipment to `replica`
  // should have arrived by now (lag + kResyncGrace) but the replica has not
  // applied it — a broken link lost it — ship everything again, as Redis's
  // resync after a reconnect does. Otherwise nothing.
  void resync_if_behind(Self& replica);
  static constexpr Duration kResyncGrace = Duration::millis(200);

 protected:
  // A primary with no replicas, on a node of its own. `replication_lag` >= 0
  // (asserted; run validation rejects a negative one as bad input, exit 2).
  ReplicatedNode(World& world, Network& net, std::string name, Duration clock_offset,
                 Duration replication_lag);
  ~ReplicatedNode() = default;
  ReplicatedNode(const ReplicatedNode&) = delete;
  ReplicatedNode& operator=(const ReplicatedNode&) = delete;

  // A primary with replicas: what has anyone to ship to.
  bool ships() const { return role_ == Role::kPrimary && !replicas_.empty(); }
  const std::vector<Self*>& replicas() const { return replicas_; }
  // Primary: the last sequence number handed out (never reset).
  uint64_t shipped_seq() const { return shipped_seq_; }
  // Primary with replicas (asserted): ships `payload` to every replica, in
  // joining order, under one new sequence number.
  void ship_to_replicas(const Payload& payload);
  // Primary: a full copy to `replica` under a new number of its own.
  void resync(Self& replica);
  // Replica back from a crash (asserted: it has a primary): forgets what it
  // applied and asks its primary for a full copy.
  void resync_from_primary();

 private:
  Self& self() { return static_cast<Self&>(*this); }
  const Self& self() const { return static_cast<const Self&>(*this); }
  void ship(Self& replica, uint64_t seq, const Payload& payload);
  void apply_shipment(const ReplicatedNode* from, uint64_t seq, const Payload& payload);

  World& world_;
  Network& net_;
  Node node_;
  Duration replication_lag_;
  Role role_ = Role::kPrimary;
  Self* primary_ = nullptr;      // when a replica
  std::vector<Self*> replicas_;  // when a primary, in joining order
  uint64_t shipped_seq_ = 0;     // primary: last shipment's number
  uint64_t applied_seq_ = 0;     // replica: last applied shipment
  // Primary: the last shipment sent to each replica, by name (a deterministic
  // order, though it is only looked up).
  struct Sent {
    uint64_t seq = 0;
    TimePoint at;
  };
  std::map<std::string, Sent> sent_;
};

// What decides a failover (each backend's settings carry these three).
struct FailoverParams {
  bool failover = false;     // off: the group never promotes anyone
  Duration down_after;       // > 0: how long the primary must be unreachable
  Duration discovery_delay;  // >= 0: how much later clients follow a promotion
};

// A primary with its replicas and, when failover is on, the monitor that
// promotes a replica and demotes a returning old primary (see the top).
// Member is a ReplicatedNode's Self.
template <typename Member>
class FailoverGroup {
 public:
  // members[0] is the initial primary; the others become its replicas now.
  // `observer` is where reachability is seen from (nullptr: every running
  // member is reachable; only without failover, asserted).
  FailoverGroup(World& world, Network& net, std::string name, std::vector<Member*> members,
                Node* observer, const FailoverParams& params);
  FailoverGroup(const FailoverGroup&) = delete;
  FailoverGroup& operator=(const FailoverGroup&) = delete;

  const std::string& name() const { return name_; }
  // What clients are told the primary is (lags failovers by discovery_delay).
  Member& published_primary() { return *published_; }
  Member& current_primary() { return *current_; }
  int failovers() const { return failovers_; }
  // The replicas clients are told of now, as Sentinel lists a master's
  // (Redisson's "available slaves"): the members other than the published
  // primary that the monitor reaches. Without a monitor, every running one.
  int replicas_available() const {
    int n = 0;
    for (Member* m : members_) n += m != published_ && reachable(*m) ? 1 : 0;
    return n;
  }

  // The monitor's check period (Sentinel's, and what MHA-like tools poll at).
  static constexpr Duration kCheckPeriod = Duration::millis(100);

 private:
  bool reachable(Member& m) const;
  void check();
  void promote_best();
  void repoint_members();
  // One primary among the members reachable with it (asserted after check()).
  void check_roles() const;

  World& world_;
  Network& net_;
  std::string name_;
  std::vector<Member*> members_;
  Node* observer_;
  FailoverParams params_;
  Member* current_;
  Member* published_;
  std::optional<TimePoint> primary_down_since_;
  int failovers_ = 0;
  // Each promotion and each publication: both move the World's
  // state_changes() (a new current or published primary changes what a
  // fresh contender is answered).
  ChangeCount primaries_changed_;
};

// --- ReplicatedNode ------------------------------------------------------

template <typename Self, typename Payload>
ReplicatedNode<Self, Payload>::ReplicatedNode(World& world, Network& net, std::string name,
                                              Duration clock_offset, Duration replication_lag)
    : world_(world),
      net_(net),
      node_(world, std::move(name), clock_offset),
      replication_lag_(replication_lag) {
  // A negative lag would schedule into the past.
  LOCKSIM_ASSERT(replication_lag_ >= Duration::zero());
}

template <typename Self, typename Payload>
void ReplicatedNode<Self, Payload>::ship_to_replicas(const Payload& payload) {
  LOCKSIM_ASSERT(ships());
  const uint64_t seq = ++shipped_seq_;
  for (Self* r : replicas_) {
    // Pair of become_replica_of: a primary's replica list and its replicas'
    // primary pointers agree.
    LOCKSIM_ASSERT_MSG(r->primary_ == this && r->role_ == Role::kReplica,
                       "a primary ships to a node that does not follow it");
    ship(*r, seq, payload);
  }
}

template <typename Self, typename Payload>
void ReplicatedNode<Self, Payload>::resync(Self& replica) {
  ship(replica, ++shipped_seq_, self().shipment());
}

template <typename Self, typename Payload>
void ReplicatedNode<Self, Payload>::resync_from_primary() {
  // Pair of become_replica_of, which gives every replica its primary.
  LOCKSIM_ASSERT(role_ == Role::kReplica && primary_ != nullptr);
  applied_seq_ = 0;
  primary_->resync(self());
}

template <typename Self, typename Payload>
void ReplicatedNode<Self, Payload>::ship(Self& replica, uint64_t seq, const Payload& payload) {
  LOCKSIM_ASSERT_MSG(&replica != this, "a node ships to itself");
  // Every shipment carries the newest number this node has handed out, and
  // each replica sees its numbers rise.
  LOCKSIM_ASSERT_MSG(seq == shipped_seq_, "a shipment with a stale sequence number");
  Sent& sent = sent_[replica.name()];
  LOCKSIM_ASSERT_MSG(seq > sent.seq, "shipment numbers to a replica went back");
  sent = Sent{seq, world_.now()};
  const uint64_t incarnation = self().incarnation();
  Self* target = &replica;
  world_.after(replication_lag_, [this, target, seq, payload, incarnation] {
    // Sent from the primary's process: a paused primary sends on resume, a
    // crashed or demoted one never (its output buffer died with it).
    node_.deliver([this, target, seq, payload, incarnation] {
      if (self().incarnation() != incarnation || role_ != Role::kPrimary) return;
      net_.send(node_, target->node_,
                [this, target, seq, payload] { target->apply_shipment(this, seq, payload); });
    });
  });
}

template <typename Self, typename Payload>
void ReplicatedNode<Self, Payload>::apply_shipment(const ReplicatedNode* from, uint64_t seq,
                                                   const Payload& payload) {
  if (role_ != Role::kReplica || primary_ != from || seq <= applied_seq_) return;
  // Pair of ship(): a replica never gets ahead of what its primary numbered.
  LOCKSIM_ASSERT_MSG(seq <= from->shipped_seq_, "a replica applied an unnumbered shipment");
  LOCKSIM_ASSERT(node_.running());
  applied_seq_ = seq;
  self().install_shipment(payload, seq);
}

template <typename Self, typename Payload>
void ReplicatedNode<Self, Payload>::become_primary() {
  // Only a replica is promoted (the group picks among its replicas).
  LOCKSIM_ASSERT_MSG(role_ == Role::kReplica, "promoting a node that is not a replica");
  if (primary_ != nullptr) std::erase(primary_->replicas_, &self());
  role_ = Role::kPrimary;
  primary_ = nullptr;
  self().on_promoted();
  LOCKSIM_ASSERT(replicas_.empty());  // a replica has none; followers are re-pointed by the group
}

template <typename Self, typename Payload>
void ReplicatedNode<Self, Payload>::become_replica_of(Self& primary) {
  LOCKSIM_ASSERT_MSG(&primary != this, "a node made a replica of itself");
  LOCKSIM_ASSERT_MSG(primary.role_ == Role::kPrimary, "a node made a replica of a replica");
  if (primary_ != nullptr && primary_ != &primary) std::erase(primary_->replicas_, &self());
  self().on_following(role_ == Role::kPrimary);
  // A demoted primary forgets its own replicas; they are re-pointed by the group.
  replicas_.clear();
  role_ = Role::kReplica;
  primary_ = &primary;
  applied_seq_ = 0;
  if (std::find(primary.replicas_.begin(), primary.replicas_.end(), &self()) ==
      primary.replicas_.end()) {
    primary.replicas_.push_back(&self());
  }
  LOCKSIM_ASSERT(std::count(primary.replicas_.begin(), primary.replicas_.end(), &self()) == 1);
  // Full resync: the replica's state is replaced by the primary's.
  primary.resync(self());
}

template <typename Self, typename Payload>
void ReplicatedNode<Self, Payload>::resync_if_behind(Self& replica) {
  if (role_ != Role::kPrimary || replica.primary_ != this) return;
  auto it = sent_.find(replica.name());
  if (it == sent_.end() || replica.applied_seq_ >= it->second.seq) return;
  if (world_.now() - it->second.at < replication_lag_ + kResyncGrace) return;
  resync(replica);
}

// --- FailoverGroup -------------------------------------------------------

template <typename Member>
FailoverGroup<Member>::FailoverGroup(World& world, Network& net, std::string name,
                                     std::vector<Member*> members, Node* observer,
                                     const FailoverParams& params)
    : world_(world),
      net_(net),
      name_(std::move(name)),
      members_(std::move(members)),
      observer_(observer),
      params_(params) {
  LOCKSIM_ASSERT_MSG(!members_.empty(), "a replication group needs a primary");
  world_.count_changes_of(primaries_changed_);
  LOCKSIM_ASSERT(params_.down_after > Duration::zero() &&
                 params_.discovery_delay >= Duration::zero());
  LOCKSIM_ASSERT_MSG(!params_.failover || observer_ != nullptr, "failover needs its monitor");
  current_ = published_ = members_[0];
  LOCKSIM_ASSERT(current_->role() == ReplicationRole::kPrimary);
  for (size_t i = 1; i < members_.size(); ++i) members_[i]->become_replica_of(*current_);
  if (members_.size() > 1) world_.after(kCheckPeriod, [this] { check(); });
}

template <typename Member>
bool FailoverGroup<Member>::reachable(Member& m) const {
  return m.node().running() && (observer_ == nullptr || net_.connected(*observer_, m.node()));
}

template <typename Member>
void FailoverGroup<Member>::check() {
  world_.after(kCheckPeriod, [this] { check(); });
  if (reachable(*current_)) {
    primary_down_since_.reset();
  } else if (!primary_down_since_) {
    primary_down_since_ = world_.now();
  }
  if (params_.failover && primary_down_since_ &&
      world_.now() - *primary_down_since_ >= params_.down_after) {
    promote_best();
  }
  repoint_members();
  check_roles();
}

template <typename Member>
void FailoverGroup<Member>::promote_best() {
  Member* best = nullptr;
  for (Member* m : members_) {
    if (m == current_ || !reachable(*m) || m->role() != ReplicationRole::kReplica) continue;
    if (best == nullptr || m->applied_seq() > best->applied_seq()) best = m;
  }
  if (best == nullptr) return;  // nobody to promote: keep waiting
  best->become_primary();
  current_ = best;
  primary_down_since_.reset();
  const int failover = ++failovers_;
  primaries_changed_.bump();
  world_.after(params_.discovery_delay, [this, best, failover] {
    if (failovers_ == failover) {  // unless a later failover overtook it
      published_ = best;
      primaries_changed_.bump();
    }
  });
  LOCKSIM_ASSERT(current_->role() == ReplicationRole::kPrimary);
}

template <typename Member>
void FailoverGroup<Member>::repoint_members() {
  // Anyone reachable who is not following the current primary is told to:
  // this is how a returning old primary becomes a replica and loses the
  // writes the new primary never saw.
  for (Member* m : members_) {
    if (m == current_ || !reachable(*m) || !reachable(*current_)) continue;
    if (m->role() == ReplicationRole::kPrimary || m->primary() != current_) {
      m->become_replica_of(*current_);
    } else if (net_.connected(current_->node(), m->node())) {
      current_->resync_if_behind(*m);  // a replica back from a partition catches up
    }
  }
}

template <typename Member>
void FailoverGroup<Member>::check_roles() const {
  // One primary per group, as far as anyone can reach: the current primary
  // is a primary, and every member reachable along with it follows it. (An
  // old primary cut off from the observer still believes it leads until it
  // is reachable again and demoted: split brain is what failover runs show.)
  LOCKSIM_ASSERT_MSG(current_->role() == ReplicationRole::kPrimary,
                     "the group's primary is not one");
  LOCKSIM_ASSERT(std::count(members_.begin(), members_.end(), published_) == 1);
  if (!reachable(*current_)) return;
  for (Member* m : members_) {
    if (m == current_ || !reachable(*m)) continue;
    LOCKSIM_ASSERT_MSG(m->role() == ReplicationRole::kReplica && m->primary() == current_,
                       "two primaries in one group");
  }
}

}  // namespace locksim::sim
