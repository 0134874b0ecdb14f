// One live client's connections to a Redis group with replicas: the live
// twin of sim/redis/redis_node.h's GroupConnection and
// sim/redis/subscriber_connection.h's GroupSubscriber.
//
// Each command goes to the member the SentinelView publishes as master now,
// over one hiredis connection per member the client has talked to; when the
// published master changes (a failover reached the clients) the connection
// to the old one is closed, as the simulated client drops it, and the next
// command connects to the new one. replicas() reads the view's count of the
// replicas Sentinel lists, without sending anything (Redisson's WAIT).
//
// Member addresses are the client's own: a relay of the client's when the
// run has link faults, so a partition of a client and a replica holds as
// well after a failover as before it.
//
// Not thread-safe: one connection belongs to one client thread (the view is
// shared and thread-safe).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "env/redis_connection.h"
#include "env/redis_subscriber.h"
#include "env/time.h"
#include "live/hiredis_connection.h"
#include "live/hiredis_subscriber.h"
#include "live/sentinel_watch.h"

namespace locksim::live {

// The ports one client reaches each member of a group at, by member name.
using MemberPorts = std::map<std::string, int>;

class GroupConnection : public RedisConnection {
 public:
  // Group `group` of `view` (which must outlive this); `ports` names every
  // member. `timeout` bounds each connect and command, as HiredisConnection's.
  GroupConnection(const SentinelView& view, size_t group, MemberPorts ports, Duration timeout);

  Reply command(std::vector<std::string> argv) override;
  std::string server_name() const override { return view_.group(group_).name; }
  int replicas() const override { return view_.replicas_listed(group_); }

 private:
  const SentinelView& view_;
  size_t group_;
  MemberPorts ports_;
  Duration timeout_;
  std::string target_;  // the member conn_ goes to
  std::unique_ptr<HiredisConnection> conn_;
};

class GroupSubscriber : public RedisSubscriber {
 public:
  GroupSubscriber(const SentinelView& view, size_t group, MemberPorts ports, Duration timeout);

  // Each call first follows the published master: a subscriber that finds
  // it moved drops its connection and subscribes again there to every
  // channel it holds (its subscriptions on the old master died with it, or
  // will hear nothing more).
  bool subscribe(const std::string& channel) override;
  void unsubscribe(const std::string& channel) override;
  std::optional<std::string> wait_message(const std::string& channel, Duration timeout) override;
  std::string server_name() const override { return view_.group(group_).name; }

 private:
  HiredisSubscriber& follow();

  const SentinelView& view_;
  size_t group_;
  MemberPorts ports_;
  Duration timeout_;
  std::string target_;
  std::unique_ptr<HiredisSubscriber> sub_;
  std::set<std::string> channels_;
};

}  // namespace locksim::live
