// The replication link between a primary and its replicas: binlog
// shipments, their acknowledgements, and semi-synchronous commits.
//
// Built on the same messaging primitive as the Redis replication link (a
// timer for the lag, Node::deliver on the sender so a paused primary sends
// on resume and a crashed one never, then Network::send), and kept in this
// file alone so it can move onto connection-based networking as one piece.
//
// A shipment carries the primary's whole committed table (TableImage) with a
// sequence number; a replica applies only newer ones, so it is always a
// consistent prefix of its primary's history, as the binlog makes it. A
// shipment lost to a partition is made good by a full resync once the link
// is back (MysqlNode::resync_if_behind, driven by the group).
#include <algorithm>

#include "env/assert.h"
#include "sim/mysql/mysql_node.h"

namespace locksim::sim::mysql {

bool MysqlNode::semi_sync_waits() const {
  // rpl_semi_sync_master_wait_no_slave=ON (the default): the primary waits
  // even while no replica is connected, until the timeout switches it off.
  return params_.semi_sync && role_ == Role::kPrimary && !replicas_.empty() && semi_sync_on_;
}

void MysqlNode::binlog_new_commits() {
  if (engine_.commit_seq() == binlogged_commit_) return;
  binlogged_commit_ = engine_.commit_seq();
  if (role_ != Role::kPrimary || replicas_.empty()) return;
  const uint64_t seq = ++shipped_seq_;
  const TableImage image = engine_.committed_image();
  for (MysqlNode* r : replicas_) {
    // Pair of become_replica_of: a primary's replica list and its replicas'
    // primary pointers agree.
    LOCKSIM_ASSERT_MSG(r->primary_ == this && r->role_ == Role::kReplica,
                       "a primary ships to a node that does not follow it");
    ship(*r, seq, image);
  }
}

void MysqlNode::ship(MysqlNode& replica, uint64_t seq, const TableImage& image) {
  LOCKSIM_ASSERT_MSG(&replica != this, "a node ships to itself");
  LOCKSIM_ASSERT_MSG(seq == shipped_seq_, "a shipment with a stale sequence number");
  Sent& sent = sent_[replica.name()];
  LOCKSIM_ASSERT_MSG(seq > sent.seq, "shipment numbers to a replica went back");
  sent = Sent{seq, world_.now()};
  const uint64_t incarnation = incarnation_;
  MysqlNode* target = &replica;
  world_.after(params_.replication_lag, [this, target, seq, image, incarnation] {
    // Sent by the primary's binlog dump thread: a paused primary sends on
    // resume, a crashed one never (the binlog cache died with it).
    node_.deliver([this, target, seq, image, incarnation] {
      if (incarnation_ != incarnation || role_ != Role::kPrimary) return;
      net_.send(node_, target->node_,
                [this, target, seq, image] { target->apply_shipment(this, seq, image); });
    });
  });
}

void MysqlNode::apply_shipment(const MysqlNode* from, uint64_t seq, const TableImage& image) {
  if (role_ != Role::kReplica || primary_ != from || seq <= applied_seq_) return;
  // Pair of ship(): a replica never gets ahead of what its primary numbered.
  LOCKSIM_ASSERT_MSG(seq <= from->shipped_seq_, "a replica applied an unnumbered shipment");
  LOCKSIM_ASSERT(node_.running());
  engine_.apply_image(image);
  applied_seq_ = seq;
  // The semi-sync ACK goes back once the event is in the relay log.
  MysqlNode* to = primary_;
  const uint64_t inc = to->incarnation_;
  net_.send(node_, to->node_, [to, seq, inc] { to->on_ack(seq, inc); });
}

void MysqlNode::on_ack(uint64_t seq, uint64_t incarnation) {
  if (incarnation != incarnation_ || role_ != Role::kPrimary) return;
  LOCKSIM_ASSERT_MSG(seq <= shipped_seq_, "an ack for a shipment never sent");
  acked_seq_ = std::max(acked_seq_, seq);
  // A replica that caught up switches semi-sync back on.
  if (acked_seq_ == shipped_seq_) semi_sync_on_ = true;
  release_acked();
}

void MysqlNode::hold_for_ack(Answer answer) {
  LOCKSIM_ASSERT(semi_sync_waits());
  // The commit is in the shipment just made (respond() ships first).
  const uint64_t seq = shipped_seq_;
  LOCKSIM_ASSERT_MSG(held_.empty() || held_.back().binlog_seq <= seq, "held out of binlog order");
  held_.push_back(HeldAnswer{seq, std::move(answer)});
  const uint64_t inc = incarnation_;
  world_.after(params_.semi_sync_timeout, [this, seq, inc] {
    node_.deliver([this, seq, inc] { semi_sync_timeout(seq, inc); });
  });
  release_acked();  // an ack may be in already (a lag of zero)
}

void MysqlNode::release_acked() {
  size_t n = 0;
  while (n < held_.size() && held_[n].binlog_seq <= acked_seq_) ++n;
  std::vector<HeldAnswer> ready(std::make_move_iterator(held_.begin()),
                                std::make_move_iterator(held_.begin() + static_cast<long>(n)));
  held_.erase(held_.begin(), held_.begin() + static_cast<long>(n));
  for (HeldAnswer& h : ready)
    h.answer.reply(h.answer.session, incarnation_, std::move(h.answer.result));
}

void MysqlNode::semi_sync_timeout(uint64_t binlog_seq, uint64_t incarnation) {
  if (incarnation != incarnation_) return;
  const bool still_held =
      std::any_of(held_.begin(), held_.end(),
                  [binlog_seq](const HeldAnswer& h) { return h.binlog_seq == binlog_seq; });
  if (!still_held) return;
  // No replica answered in time: fall back to asynchronous replication and
  // answer everyone waiting (they are all committed already).
  ++semi_sync_timeouts_;
  semi_sync_on_ = false;
  std::vector<HeldAnswer> ready = std::move(held_);
  held_.clear();
  for (HeldAnswer& h : ready)
    h.answer.reply(h.answer.session, incarnation_, std::move(h.answer.result));
}

}  // namespace locksim::sim::mysql
