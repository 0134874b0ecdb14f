// What a live run's clients know of each Redis group: which member is the
// master they talk to, and how many replicas Sentinel lists behind it (what
// Redisson reads to follow a lock write with WAIT). The live twin of
// sim/replication.h's FailoverGroup::published_primary() and
// replicas_available().
//
// How clients learn of a failover, and why this way: in the simulation the
// group publishes a promotion to every client discovery_delay after the
// monitor made it ("DNS, a proxy, a VIP moving, Sentinel's clients asking
// again"), the same instant for all of them. Live, one watcher thread asks
// the real redis-sentinel every kPollPeriod (SENTINEL get-master-addr-by-name
// and SENTINEL replicas, what a Sentinel-aware client such as Redisson or
// Jedis asks) and publishes a master it has not seen before discovery_delay
// after it first saw it; a later change overtakes an earlier one still
// waiting, as a later failover does in the simulation. The watcher talks to
// Sentinel directly, not through a relay: what it models is the clients'
// shared knowledge, which the simulation does not partition either.
//
// Without failover (replicas but no Sentinel) the view never changes: the
// first member is the master and every replica started is listed.
//
// Threads: published_primary() and replicas_listed() may be called from any
// thread; the watcher runs on its own, started by watch() and stopped by the
// destructor.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "env/time.h"

namespace locksim::live {

class SentinelView {
 public:
  struct Group {
    std::string name;                  // "redis-1": Sentinel's name for it too
    std::vector<std::string> members;  // members[0] the first master, then its replicas
  };

  // A view of `groups`, each led by its first member, listing all its other
  // members as replicas, until watch() says otherwise.
  explicit SentinelView(std::vector<Group> groups);
  // Stops the watcher (if any) and joins it. Never throws.
  ~SentinelView();
  SentinelView(const SentinelView&) = delete;
  SentinelView& operator=(const SentinelView&) = delete;

  // Starts the watcher: asks the Sentinel on 127.0.0.1:`sentinel_port`,
  // maps each address it answers to a member by `member_of_port` (the ports
  // Sentinel knows the members at), and publishes a new master
  // `discovery_delay` after it first answers it. An answer it cannot map (a
  // Sentinel that is down, paused or cut off) changes nothing. Call once.
  void watch(int sentinel_port, std::map<int, std::string> member_of_port,
             Duration discovery_delay);

  size_t groups() const { return groups_.size(); }
  const Group& group(size_t g) const { return groups_.at(g); }
  // The member clients of group `g` talk to now.
  std::string published_primary(size_t g) const;
  // The member Sentinel last named master of group `g` (clients follow it
  // discovery_delay later): what a fault aimed at @primary hits, as the
  // simulation's group's current primary.
  std::string current_primary(size_t g) const;
  // How many replicas Sentinel lists behind group `g`'s master now, not
  // counting those it flags down or disconnected (the simulation counts the
  // members its monitor reaches).
  int replicas_listed(size_t g) const;
  // Promotions published so far, over all groups (the run's failovers).
  int failovers() const { return failovers_.load(); }

  // How often the watcher asks Sentinel: well under any discovery delay a
  // scenario sets, and light enough for a 2-core machine.
  static constexpr std::chrono::milliseconds kPollPeriod{50};

 private:
  struct State {
    std::string published;  // what clients are told
    std::string seen;       // what Sentinel last answered
    std::chrono::steady_clock::time_point seen_at;
    int replicas = 0;
  };
  void run(int sentinel_port, const std::map<int, std::string>& member_of_port,
           Duration discovery_delay);
  // One round of questions to Sentinel for group `g`.
  void poll(size_t g, class HiredisConnection& sentinel,
            const std::map<int, std::string>& member_of_port, Duration discovery_delay);

  const std::vector<Group> groups_;
  mutable std::mutex mutex_;
  std::condition_variable stop_changed_;
  bool stopping_ = false;      // guarded by mutex_
  std::vector<State> states_;  // by group; guarded by mutex_
  std::atomic<int> failovers_{0};
  std::thread watcher_;
};

}  // namespace locksim::live
