// The replication module both the Redis and the MySQL backends stand on
// (sim/replication.h), on a toy node whose whole state is one integer: the
// lagged FIFO shipper (sequence numbers, a crashed primary's lost buffer, the
// full copy a joining replica takes) and the failover monitor (who is
// promoted, when clients hear of it, how a returning old primary is demoted).
// The backends' own tests (redis_topology_test.cpp, redis_failover_test.cpp,
// mysql_topology_test.cpp) pin the same rules through their commands.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/network.h"
#include "sim/node.h"
#include "sim/replication.h"
#include "sim/world.h"

namespace locksim::sim {
namespace {

constexpr TimePoint ms(int64_t v) {
  return TimePoint{} + Duration::millis(v);
}
constexpr Duration kOneNs = Duration::nanos(1);

// A node whose state is `value`; a write ships it at once (as Redis's
// after_write and MySQL's binlog_new_commits do).
class ToyNode : public ReplicatedNode<ToyNode, int> {
 public:
  ToyNode(World& world, Network& net, std::string name, Duration lag)
      : ReplicatedNode(world, net, std::move(name), Duration::zero(), lag) {
    node().on_crash = [this] {
      ++incarnation_;
      value_ = 0;  // no persistence
    };
    node().on_restart = [this] {
      if (role() == Role::kReplica) resync_from_primary();
    };
  }

  int value() const { return value_; }
  void write(int v) {
    value_ = v;
    if (ships()) ship_to_replicas(value_);
  }

 private:
  friend class ReplicatedNode<ToyNode, int>;
  uint64_t incarnation() const { return incarnation_; }
  int shipment() const { return value_; }
  void install_shipment(const int& v, uint64_t /*seq*/) { value_ = v; }
  void on_promoted() {}
  void on_following(bool /*was_primary*/) {}

  int value_ = 0;
  uint64_t incarnation_ = 0;
};

// Zero latency: the only delay between a write and a replica is the lag.
struct ToySim {
  explicit ToySim(int replicas, bool failover = true)
      : world(WorldOptions{.seed = 1}),
        net(world, world.rng().split("network")),
        monitor(world, "monitor") {
    net.set_default_link(LinkParams{Duration::zero(), Duration::zero(), 0.0});
    std::vector<ToyNode*> members;
    for (int i = 0; i <= replicas; ++i) {
      nodes.push_back(std::make_unique<ToyNode>(world, net, "n" + std::to_string(i), kLag));
      members.push_back(nodes.back().get());
    }
    group = std::make_unique<FailoverGroup<ToyNode>>(
        world, net, "g", members, &monitor,
        FailoverParams{failover, Duration::seconds(1), Duration::millis(500)});
  }
  ~ToySim() { world.shutdown(); }

  void at(TimePoint t, std::function<void()> action) { world.at(t, std::move(action)); }
  ToyNode& n(size_t i) { return *nodes.at(i); }

  static constexpr Duration kLag = Duration::millis(50);
  World world;
  Network net;
  Node monitor;
  std::vector<std::unique_ptr<ToyNode>> nodes;
  std::unique_ptr<FailoverGroup<ToyNode>> group;
};

TEST(ReplicationShipper, EachWriteLandsExactlyTheLagLaterInOrder) {
  ToySim sim(1);
  ToyNode& primary = sim.n(0);
  ToyNode& replica = sim.n(1);
  EXPECT_EQ(replica.primary(), &primary);
  sim.world.run_until(ms(50));
  EXPECT_EQ(replica.applied_seq(), 1u);  // the full copy taken on joining

  sim.at(ms(100), [&] { primary.write(1); });
  sim.at(ms(101), [&] { primary.write(2); });
  sim.world.run_until(ms(150) - kOneNs);
  EXPECT_EQ(replica.value(), 0);
  sim.world.run_until(ms(150));
  EXPECT_EQ(replica.value(), 1);
  EXPECT_EQ(replica.applied_seq(), 2u);
  sim.world.run_until(ms(151));
  EXPECT_EQ(replica.value(), 2);
  EXPECT_EQ(replica.applied_seq(), 3u);
}

TEST(ReplicationShipper, ACrashedPrimaryNeverSendsWhatItHadBuffered) {
  ToySim sim(1, /*failover=*/false);
  ToyNode& primary = sim.n(0);
  ToyNode& replica = sim.n(1);
  sim.at(ms(100), [&] { primary.write(7); });
  sim.at(ms(120), [&] { primary.node().crash(); });
  sim.at(ms(130), [&] { primary.node().restart(); });
  sim.world.run_until(ms(150));  // when the write would have landed
  EXPECT_EQ(replica.value(), 0);
  EXPECT_EQ(replica.applied_seq(), 1u);
  // The shipment it numbered never came: the monitor's first check at least
  // lag + kResyncGrace after it was sent (400) has the restarted primary
  // resync the replica with what it has now, which is nothing.
  sim.world.run_until(ms(400) + ToySim::kLag - kOneNs);
  EXPECT_EQ(replica.applied_seq(), 1u);
  sim.world.run_until(ms(400) + ToySim::kLag);
  EXPECT_EQ(replica.applied_seq(), 3u);
  EXPECT_EQ(replica.value(), 0);
}

TEST(FailoverMonitor, PromotesTheReplicaThatAppliedMostAndPublishesItLater) {
  ToySim sim(2);
  ToyNode& old_primary = sim.n(0);
  ToyNode& behind = sim.n(1);  // first in member order: a naive pick would take it
  ToyNode& ahead = sim.n(2);
  sim.at(ms(100), [&] { sim.net.partition({&behind.node()}, {&old_primary.node()}); });
  sim.at(ms(200), [&] { old_primary.write(5); });
  // Crash at 1 050: first seen down at 1 100, promoted at the 2 100 check.
  sim.at(ms(1050), [&] { old_primary.node().crash(); });
  sim.world.run_until(ms(2100) - kOneNs);
  ASSERT_LT(behind.applied_seq(), ahead.applied_seq());
  EXPECT_EQ(&sim.group->current_primary(), &old_primary);

  sim.world.run_until(ms(2100));
  EXPECT_EQ(&sim.group->current_primary(), &ahead);
  EXPECT_EQ(ahead.role(), ReplicationRole::kPrimary);
  EXPECT_EQ(behind.primary(), &ahead);
  EXPECT_EQ(sim.group->failovers(), 1);
  EXPECT_EQ(&sim.group->published_primary(), &old_primary);
  sim.world.run_until(ms(2600));
  EXPECT_EQ(&sim.group->published_primary(), &ahead);
  EXPECT_EQ(behind.value(), 5);  // the full copy from the new primary

  // The old primary comes back empty and is made a replica of the new one.
  sim.at(ms(3000), [&] { old_primary.node().restart(); });
  sim.world.run_until(ms(3100) + ToySim::kLag);
  EXPECT_EQ(old_primary.role(), ReplicationRole::kReplica);
  EXPECT_EQ(old_primary.primary(), &ahead);
  EXPECT_EQ(old_primary.value(), 5);
  EXPECT_EQ(sim.group->failovers(), 1);  // a demotion is not a failover
}

}  // namespace
}  // namespace locksim::sim
