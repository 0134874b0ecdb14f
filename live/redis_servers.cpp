#include "live/redis_servers.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "env/assert.h"
#include "live/hiredis_connection.h"

namespace locksim::live {

namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr const char* kSentinel = "sentinel";
// A settled group: replicas in sync and listed by Sentinel. A full sync of
// an empty dataset takes milliseconds; Sentinel lists a replica after its
// first INFO of the master, right after it connects.
constexpr milliseconds kSettleTimeout{15000};
constexpr milliseconds kSettlePoll{20};
constexpr Duration kAdminTimeout = Duration::seconds(2);
// Sentinel's default failover-timeout: the floor of the one set here.
constexpr Duration kFailoverTimeoutMin = Duration::seconds(180);

std::string group_name(int g) {
  return "redis-" + std::to_string(g + 1);
}
std::string replica_name(int g, int r) {
  return group_name(g) + "-r" + std::to_string(r);
}

Reply admin(int port, std::vector<std::string> argv) {
  HiredisConnection c("127.0.0.1", port, kAdminTimeout, "setup");
  return c.command(std::move(argv));
}

void expect_ok(const Reply& r, const std::string& what) {
  if (!r.is_ok()) throw std::runtime_error("live redis setup: " + what + ": " + r.to_string());
}

// Polls `settled` until it holds; throws naming `what` at the timeout.
void wait_until(const std::function<bool()>& settled, const std::string& what) {
  const auto deadline = Clock::now() + kSettleTimeout;
  while (!settled()) {  // bounded by kSettleTimeout
    if (Clock::now() >= deadline) {
      throw std::runtime_error("live redis setup: " + what + " within " +
                               std::to_string(kSettleTimeout.count()) + " ms");
    }
    std::this_thread::sleep_for(kSettlePoll);
  }
}

// How many of a master's replicas are online (INFO replication's slaveN
// lines with state=online).
int online_replicas(int master_port) {
  const Reply info = admin(master_port, {"INFO", "replication"});
  if (info.kind != Reply::Kind::kBulk) return 0;
  int online = 0;
  std::istringstream lines(info.text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("slave", 0) == 0 && line.find("state=online") != std::string::npos) ++online;
  }
  return online;
}

}  // namespace

std::vector<std::string> RedisServers::names(const sim::redis::Topology& topology) {
  std::vector<std::string> out;
  for (int g = 0; g < topology.masters; ++g) {
    out.push_back(group_name(g));
    for (int r = 1; r <= topology.replicas; ++r) out.push_back(replica_name(g, r));
  }
  if (topology.failover) out.push_back(kSentinel);
  return out;
}

std::vector<std::pair<std::string, std::string>> RedisServers::links(
    const sim::redis::Topology& topology) {
  std::vector<std::pair<std::string, std::string>> out;
  for (int g = 0; g < topology.masters; ++g) {
    for (int r = 1; r <= topology.replicas; ++r)
      out.emplace_back(replica_name(g, r), group_name(g));
  }
  if (topology.failover) {
    for (const std::string& name : names(topology)) {
      if (name != kSentinel) out.emplace_back(kSentinel, name);
    }
  }
  return out;
}

std::unique_ptr<RedisServers> RedisServers::start(const sim::redis::Topology& topology,
                                                  const RedisProcess::Options& options,
                                                  Duration run_length) {
  LOCKSIM_ASSERT_MSG(topology.masters >= 1, "the harness resolves the algorithm's default");
  LOCKSIM_ASSERT_MSG(topology.replicas >= 0 && topology.replicas <= kReplicasMax,
                     "the live backend refuses more replicas (refuse_unsupported)");
  LOCKSIM_ASSERT(!topology.failover || topology.replicas >= 1);
  // Owns what it starts from here on: a throw below stops it all.
  std::unique_ptr<RedisServers> servers(new RedisServers());
  servers->names_ = names(topology);
  servers->start_groups(topology, options);
  if (topology.failover) {
    servers->start_sentinel(topology, options, run_length);
  } else {
    servers->follow_masters(topology);
  }
  // Pair of names(): every named server runs.
  LOCKSIM_ASSERT(servers->processes_.size() == servers->names_.size());
  return servers;
}

void RedisServers::start_groups(const sim::redis::Topology& topology,
                                const RedisProcess::Options& options) {
  for (int g = 0; g < topology.masters; ++g) {
    SentinelView::Group group{.name = group_name(g), .members = {}};
    for (int r = 0; r <= topology.replicas; ++r) {
      const std::string name = r == 0 ? group_name(g) : replica_name(g, r);
      processes_[name] = RedisProcess::start(options);
      group.members.push_back(name);
    }
    groups_.push_back(std::move(group));
  }
  view_ = std::make_shared<SentinelView>(groups_);
}

// REPLICAOF through a relay per replica; returns once every replica is
// online at its master, then puts the replication lag on the relays (so the
// initial sync does not wait for it).
void RedisServers::follow_masters(const sim::redis::Topology& topology) {
  for (const auto& [replica, master] : links(topology)) {
    if (replica == kSentinel) continue;
    links_.push_back({replica, master, std::make_unique<TcpRelay>(port(master))});
    const std::string relay_port = std::to_string(links_.back().relay->port());
    expect_ok(admin(port(replica), {"REPLICAOF", "127.0.0.1", relay_port}), "REPLICAOF");
    process(replica).add_restart_args({"--replicaof", "127.0.0.1", relay_port});
  }
  for (const SentinelView::Group& g : groups_) {
    const int want = static_cast<int>(g.members.size()) - 1;
    wait_until([&] { return online_replicas(port(g.members[0])) == want; },
               g.name + "'s replicas did not come online");
  }
  const milliseconds lag(topology.replication_lag.to_ms());
  for (Link& l : links_) l.relay->set_lag(milliseconds(0), lag);
}

void RedisServers::start_sentinel(const sim::redis::Topology& topology,
                                  const RedisProcess::Options& options, Duration run_length) {
  // Sentinel's relays first: each server announces its own before it follows
  // anyone, so Sentinel meets every replica at its relay.
  std::map<int, std::string> member_of_port;
  for (const std::string& name : names_) {
    if (name == kSentinel) continue;
    links_.push_back(
        {kSentinel, name, std::make_unique<TcpRelay>(port(name), TcpRelay::Cut::kRefuse)});
    const std::string announced = std::to_string(links_.back().relay->port());
    expect_ok(admin(port(name), {"CONFIG", "SET", "replica-announce-port", announced}),
              "replica-announce-port");
    process(name).add_restart_args({"--replica-announce-port", announced});
    member_of_port[links_.back().relay->port()] = name;
  }
  std::map<std::string, int> sentinel_port_of;
  for (const auto& [port, name] : member_of_port) sentinel_port_of[name] = port;
  follow_masters(topology);
  const Duration failover_timeout = std::max(kFailoverTimeoutMin, run_length + run_length);
  std::string config;
  for (const SentinelView::Group& g : groups_) {
    const std::string& n = g.name;
    config += "sentinel monitor " + n + " 127.0.0.1 " +
              std::to_string(sentinel_port_of.at(g.members[0])) + " 1\n";
    config += "sentinel down-after-milliseconds " + n + " " +
              std::to_string(topology.down_after.to_ms()) + "\n";
    config +=
        "sentinel failover-timeout " + n + " " + std::to_string(failover_timeout.to_ms()) + "\n";
    config += "sentinel parallel-syncs " + n + " " + std::to_string(topology.replicas) + "\n";
  }
  RedisProcess::Options sentinel_options;
  sentinel_options.sentinel_config = config;
  sentinel_options.clock = options.clock;
  processes_[kSentinel] = RedisProcess::start(sentinel_options);
  sentinel_ = processes_[kSentinel].get();
  for (const SentinelView::Group& g : groups_) {
    wait_until(
        [&] {
          const Reply r = admin(sentinel_->port(), {"SENTINEL", "replicas", g.name});
          if (r.kind != Reply::Kind::kArray) return false;
          return static_cast<int>(r.elements.size()) + 1 == static_cast<int>(g.members.size()) &&
                 std::all_of(r.elements.begin(), r.elements.end(), [](const Reply& e) {
                   return std::any_of(e.elements.begin(), e.elements.end(),
                                      [](const Reply& f) { return f.text == "slave"; });
                 });
        },
        "Sentinel did not list " + g.name + "'s replicas");
  }
  view_->watch(sentinel_->port(), member_of_port, topology.discovery_delay);
}

RedisProcess& RedisServers::process(const std::string& name) const {
  const auto it = processes_.find(name);
  LOCKSIM_ASSERT_MSG(it != processes_.end(), "a server this run did not start");
  return *it->second;
}

void RedisServers::add_targets(LiveTargets& targets) const {
  for (const auto& [name, owned] : processes_) {
    RedisProcess* p = owned.get();
    std::vector<TcpRelay*> feeds;  // the replication links it is the master of
    for (const Link& l : links_) {
      if (l.to == name && l.from != kSentinel) feeds.push_back(l.relay.get());
    }
    LiveTargets::Server& t = targets.servers[name];
    t.crash = [p, feeds] {
      p->crash();
      for (TcpRelay* r : feeds) r->reset();
    };
    t.restart = [p] { p->restart(); };
    t.pause = [p] { p->pause(); };
    t.resume = [p] { p->resume(); };
    // Set only under the shim; check_live_faults and needs_clock_shim agree.
    t.jump = [p](Duration by) { p->clock()->jump(by); };
    t.set_drift = [p](int64_t ppm) { p->clock()->set_drift(ppm); };
  }
  for (const Link& l : links_) targets.links[{l.from, l.to}] = l.relay.get();
  if (sentinel_ != nullptr) {
    std::shared_ptr<const SentinelView> view = view_;
    targets.primary = [view] { return view->current_primary(0); };
  }
}

RedisServers::~RedisServers() {
  // The watcher first, then Sentinel (no failover while the groups stop),
  // then the relays and the servers.
  view_.reset();
  if (sentinel_ != nullptr) processes_.erase(kSentinel);
  links_.clear();
  processes_.clear();
}

}  // namespace locksim::live
