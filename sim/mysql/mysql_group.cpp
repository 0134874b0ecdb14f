#include "sim/mysql/mysql_group.h"

#include <algorithm>
#include <utility>

#include "env/assert.h"

namespace locksim::sim::mysql {

MysqlGroup::MysqlGroup(World& world, Network& net, std::string name,
                       std::vector<MysqlNode*> members, Node* monitor, const MysqlParams& params)
    : world_(world),
      net_(net),
      name_(std::move(name)),
      members_(std::move(members)),
      monitor_(monitor),
      params_(params) {
  LOCKSIM_ASSERT_MSG(!members_.empty(), "a replication group needs a primary");
  LOCKSIM_ASSERT(params_.down_after > Duration::zero() &&
                 params_.discovery_delay >= Duration::zero());
  LOCKSIM_ASSERT_MSG(!params_.failover || monitor_ != nullptr, "failover needs its monitor");
  current_ = published_ = members_[0];
  LOCKSIM_ASSERT(current_->role() == MysqlNode::Role::kPrimary);
  for (size_t i = 1; i < members_.size(); ++i) members_[i]->become_replica_of(*current_);
  if (members_.size() > 1) world_.after(kCheckPeriod, [this] { check(); });
}

bool MysqlGroup::reachable(MysqlNode& n) const {
  return n.node().running() && (monitor_ == nullptr || net_.connected(*monitor_, n.node()));
}

void MysqlGroup::check() {
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
  // Anyone reachable who is not following the current primary is told to.
  for (MysqlNode* m : members_) {
    if (m == current_ || !reachable(*m) || !reachable(*current_)) continue;
    if (m->role() == MysqlNode::Role::kPrimary || m->primary() != current_) {
      m->become_replica_of(*current_);
    } else if (net_.connected(current_->node(), m->node())) {
      current_->resync_if_behind(*m);  // a replica back from a partition catches up
    }
  }
  check_roles();
}

void MysqlGroup::promote_best() {
  MysqlNode* best = nullptr;
  for (MysqlNode* m : members_) {
    if (m == current_ || !reachable(*m) || m->role() != MysqlNode::Role::kReplica) continue;
    if (best == nullptr || m->applied_seq() > best->applied_seq()) best = m;
  }
  if (best == nullptr) return;  // nobody to promote: keep waiting
  best->become_primary();
  current_ = best;
  primary_down_since_.reset();
  const int failover = ++failovers_;
  world_.after(params_.discovery_delay, [this, best, failover] {
    if (failovers_ == failover) published_ = best;
  });
  LOCKSIM_ASSERT(current_->role() == MysqlNode::Role::kPrimary);
}

void MysqlGroup::check_roles() const {
  // An old primary cut off from the monitor still believes it leads until it
  // is reachable again and demoted: split brain is what failover runs show.
  LOCKSIM_ASSERT_MSG(current_->role() == MysqlNode::Role::kPrimary,
                     "the group's primary is not one");
  LOCKSIM_ASSERT(std::count(members_.begin(), members_.end(), published_) == 1);
  if (!reachable(*current_)) return;
  for (MysqlNode* m : members_) {
    if (m == current_ || !reachable(*m)) continue;
    LOCKSIM_ASSERT_MSG(m->role() == MysqlNode::Role::kReplica && m->primary() == current_,
                       "two primaries in one group");
  }
}

}  // namespace locksim::sim::mysql
