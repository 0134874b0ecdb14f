// The real Redis servers of one live run: each group's master, its replicas
// and, with failover, one redis-sentinel watching every group, the live twin
// of sim/redis/redis_deployment.h.
//
// How it is laid out, and why:
//   - Each replica follows its master with REPLICAOF through a TCP relay of
//     its own (live/tcp_relay.h), so a partition of a replica and its master
//     holds their replication stream, and the simulation's replication_lag
//     is the relay's standing lag on the master's side (real replication
//     takes well under a millisecond on loopback; the scenarios are built on
//     a lag). A master's crash resets its replication relays: what they held
//     dies with the master's output buffer, as the simulation's shipment
//     never leaves a crashed primary.
//   - Sentinel reaches every server through a relay of its own in refusing
//     mode (a cut is a dead host), and every server announces that relay's
//     port (replica-announce-port), so everything Sentinel learns and hands
//     out names a member by its Sentinel relay, and `partition
//     sentinel|redis-1-r1` hides r1 from Sentinel at once, as the simulated
//     monitor's view does.
//   - One Sentinel, quorum 1: the simulation's one observer. down_after is
//     Sentinel's down-after-milliseconds; failover-timeout is long enough
//     that Sentinel never "fixes" a replica's configuration during a run
//     (its replicas report their own relay as their master's address, which
//     differs from Sentinel's); parallel-syncs lets every replica follow the
//     new master at once, as the simulation re-points them all. Clients learn
//     of a failover through SentinelView (live/sentinel_watch.h).
//
// What differs from the simulation is in docs/how-to/live-mode.md: real
// Sentinel promotes 1 to 2 s after down_after (its ping period and a random
// start of up to 1 s), replicas it re-points follow the new master through
// Sentinel's relay (no lag, and a later partition between two replicas does
// not cut that link), and a returning old master is demoted after about 8 s
// (Sentinel's rule), not at the next check.
//
// Threads: start() and the destructor on one thread, which must outlive
// every server (PR_SET_PDEATHSIG); the view is thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "env/time.h"
#include "live/live_nemesis.h"
#include "live/redis_process.h"
#include "live/sentinel_watch.h"
#include "live/tcp_relay.h"
#include "sim/redis/topology.h"

namespace locksim::live {

class RedisServers {
 public:
  // Replicas per group live mode starts, at most: each is a redis-server
  // process on a machine that may have two cores (and five Redlock groups).
  static constexpr int kReplicasMax = 4;

  // The names a run of `topology` gives its servers, group by group, master
  // first ("redis-1", "redis-1-r1", ...), then "sentinel" with failover;
  // and the links between them (a replica and its master, Sentinel and each
  // server), as check_live_faults takes them.
  static std::vector<std::string> names(const sim::redis::Topology& topology);
  static std::vector<std::pair<std::string, std::string>> links(
      const sim::redis::Topology& topology);

  // Starts every server of `topology` (resolved: masters >= 1, replicas <=
  // kReplicasMax) with `options`, and returns once each replica is in sync
  // with its master and Sentinel lists every replica: a run starts from a
  // settled group, as the simulation's does. `run_length` sets Sentinel's
  // failover-timeout (see the top). Throws std::runtime_error (a server
  // that will not start, a group that does not settle within ~15 s); what
  // was started is stopped.
  static std::unique_ptr<RedisServers> start(const sim::redis::Topology& topology,
                                             const RedisProcess::Options& options,
                                             Duration run_length);
  // Stops the watcher, then every relay and process. Never throws.
  ~RedisServers();
  RedisServers(const RedisServers&) = delete;
  RedisServers& operator=(const RedisServers&) = delete;

  // Who leads each group, for the clients. Shared: a client's Env holds it.
  std::shared_ptr<const SentinelView> view() const { return view_; }
  // Every server by name ("sentinel" too), in names() order.
  const std::vector<std::string>& server_names() const { return names_; }
  int port(const std::string& name) const { return process(name).port(); }
  RedisProcess& process(const std::string& name) const;
  bool has_sentinel() const { return sentinel_ != nullptr; }

  // What the nemesis may do to each server and link: crash (also resetting
  // what the server's replication links hold), restart, pause, resume, the
  // clock under the shim; the replication and Sentinel relays; @primary as
  // Sentinel names it now.
  void add_targets(LiveTargets& targets) const;

 private:
  RedisServers() = default;
  void start_groups(const sim::redis::Topology& topology, const RedisProcess::Options& options);
  void follow_masters(const sim::redis::Topology& topology);
  void start_sentinel(const sim::redis::Topology& topology, const RedisProcess::Options& options,
                      Duration run_length);

  struct Link {
    std::string from, to;  // a replica and its master, or "sentinel" and a server
    std::unique_ptr<TcpRelay> relay;
  };

  std::vector<std::string> names_;
  std::map<std::string, std::unique_ptr<RedisProcess>> processes_;  // servers and Sentinel
  RedisProcess* sentinel_ = nullptr;
  std::vector<Link> links_;
  std::vector<SentinelView::Group> groups_;
  // Declared last: its watcher stops first, while the servers still run.
  std::shared_ptr<SentinelView> view_;
};

}  // namespace locksim::live
