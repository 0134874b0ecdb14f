// The MySQL side of the replication link: what the binlog ships, the
// semi-sync acknowledgements and the commits held for them.
//
// Shipping, sequence numbers and resyncs are sim/replication.h's, shared with
// Redis: a shipment carries the primary's whole committed table (TableImage)
// with a sequence number; a replica applies only newer ones, so it is always a
// consistent prefix of its primary's history, as the binlog makes it. A
// shipment lost to a partition is made good by a full resync once the link
// is back (resync_if_behind, driven by the group).
#include <algorithm>

#include "env/assert.h"
#include "sim/mysql/mysql_node.h"

namespace locksim::sim::mysql {

bool MysqlNode::semi_sync_waits() const {
  // rpl_semi_sync_master_wait_no_slave=ON (the default): the primary waits
  // even while no replica is connected, until the timeout switches it off.
  return params_.semi_sync && ships() && semi_sync_on_;
}

void MysqlNode::binlog_new_commits() {
  if (engine_.commit_seq() == binlogged_commit_) return;
  binlogged_commit_ = engine_.commit_seq();
  if (!ships()) return;
  // Sent by the primary's binlog dump thread (ReplicatedNode: a paused
  // primary sends on resume, a crashed one never: the binlog cache died with it).
  ship_to_replicas(engine_.committed_image());
}

void MysqlNode::install_shipment(const TableImage& image, uint64_t seq) {
  engine_.apply_image(image);
  // The semi-sync ACK goes back once the event is in the relay log.
  MysqlNode* to = primary();
  const uint64_t inc = to->incarnation_;
  net_.send(node(), to->node(), [to, seq, inc] { to->on_ack(seq, inc); });
}

void MysqlNode::on_ack(uint64_t seq, uint64_t incarnation) {
  if (incarnation != incarnation_ || role() != Role::kPrimary) return;
  LOCKSIM_ASSERT_MSG(seq <= shipped_seq(), "an ack for a shipment never sent");
  acked_seq_ = std::max(acked_seq_, seq);
  // A replica that caught up switches semi-sync back on.
  if (acked_seq_ == shipped_seq()) semi_sync_on_ = true;
  release_acked();
}

void MysqlNode::hold_for_ack(Answer answer) {
  LOCKSIM_ASSERT(semi_sync_waits());
  // The commit is in the shipment just made (respond() ships first).
  const uint64_t seq = shipped_seq();
  LOCKSIM_ASSERT_MSG(held_.empty() || held_.back().binlog_seq <= seq, "held out of binlog order");
  held_.push_back(HeldAnswer{seq, std::move(answer)});
  const uint64_t inc = incarnation_;
  world_.after(params_.semi_sync_timeout, [this, seq, inc] {
    node().deliver([this, seq, inc] { semi_sync_timeout(seq, inc); });
  });
  release_acked();  // an ack may be in already (a lag of zero)
}

void MysqlNode::release_acked() {
  size_t n = 0;
  while (n < held_.size() && held_[n].binlog_seq <= acked_seq_) ++n;
  std::vector<HeldAnswer> ready(std::make_move_iterator(held_.begin()),
                                std::make_move_iterator(held_.begin() + static_cast<long>(n)));
  held_.erase(held_.begin(), held_.begin() + static_cast<long>(n));
  for (HeldAnswer& h : ready) h.answer.send(incarnation_);
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
  for (HeldAnswer& h : ready) h.answer.send(incarnation_);
}

}  // namespace locksim::sim::mysql
