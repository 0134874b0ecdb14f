#include "sim/redis/redis_deployment.h"

#include <algorithm>
#include <charconv>
#include <deque>

#include "env/assert.h"
#include "sim/clock.h"
#include "sim/redis/subscriber_connection.h"

namespace locksim::sim::redis {

RedisDeployment::RedisDeployment(World& world, Network& net, const Topology& topology)
    : world_(world), net_(net), topology_(topology) {
  LOCKSIM_ASSERT_MSG(topology.masters >= 1, "the harness resolves the algorithm's default");
  LOCKSIM_ASSERT(topology.replicas >= 0);
  LOCKSIM_ASSERT_MSG(!topology.failover || topology.replicas >= 1, "validated by the harness");
  if (topology.failover) sentinel_ = std::make_unique<Node>(world, "sentinel");
  for (int g = 0; g < topology.masters; ++g) {
    const std::string group_name = "redis-" + std::to_string(g + 1);
    std::vector<RedisNode*> members;
    for (int r = 0; r <= topology.replicas; ++r) {
      const std::string name = r == 0 ? group_name : group_name + "-r" + std::to_string(r);
      servers_.push_back(
          std::make_unique<RedisNode>(world, net, name, world.rng().split(name).next(), topology));
      members.push_back(servers_.back().get());
    }
    groups_.push_back(
        std::make_unique<ReplicaGroup>(world, net, group_name, members, sentinel_.get(), topology));
  }
  LOCKSIM_ASSERT(groups_.size() == static_cast<size_t>(topology.masters));
  LOCKSIM_ASSERT(servers_.size() == groups_.size() * static_cast<size_t>(topology.replicas + 1));
}

void RedisDeployment::name_nodes(std::map<std::string, Node*>& nodes) {
  for (auto& s : servers_) nodes[s->node().name()] = &s->node();
  if (sentinel_) nodes[sentinel_->name()] = sentinel_.get();
}

ClientConnections RedisDeployment::connect(Node& client) {
  ClientConnections out;
  for (auto& g : groups_) {
    out.redis.push_back(
        std::make_unique<GroupConnection>(world_, net_, client, *g, topology_.timeout));
    out.redis_subscribers.push_back(
        std::make_unique<GroupSubscriber>(world_, net_, client, *g, topology_.timeout));
  }
  LOCKSIM_ASSERT(out.redis.size() == groups_.size());
  LOCKSIM_ASSERT(out.redis_subscribers.size() == groups_.size());
  return out;
}

Deployment::Roles RedisDeployment::roles() const {
  Roles roles;
  for (const auto& g : groups_) roles.primaries.push_back(g->current_primary().node().name());
  if (sentinel_) roles.observers.push_back(sentinel_->name());
  LOCKSIM_ASSERT(roles.primaries.size() == groups_.size());
  return roles;
}

BackendCounters RedisDeployment::counters() const {
  BackendCounters c;
  for (const auto& s : servers_) c.commands += s->commands_executed();
  for (const auto& g : groups_) c.failovers += g->failovers();
  return c;
}

namespace {

// The instant `unix_ms` begins (the next millisecond's, when `after` is
// set), or kNoChange for one at or past it (too far ahead to matter).
TimePoint at_ms(int64_t unix_ms, bool after) {
  constexpr int64_t kLastMs = LockExposure::kNoChange.ns / 1'000'000 - 1;
  if (unix_ms >= kLastMs) return LockExposure::kNoChange;
  return TimePoint{(unix_ms + (after ? 1 : 0)) * 1'000'000};
}

}  // namespace

RedisDeployment::Seen RedisDeployment::see(RedisNode& server, const LockProbe& probe) const {
  Seen out;
  // A crashed or frozen server answers nobody: no grant from it now.
  if (!server.node().running()) {
    out.kind = ServerLockState::Kind::kDown;
    return out;
  }
  const auto& keys = server.server().keys();  // read-only: no lazy expiry
  const auto it = keys.find(probe.key);
  if (it == keys.end()) return out;
  const TimePoint now = world_.now();
  // A hash lock (Redisson's) is held by its field's owner.
  const auto& hash = it->second.hash;
  out.holder = hash && !hash->empty() ? &hash->begin()->first : &it->second.value;
  out.kind = ServerLockState::Kind::kExpired;
  if (Keyspace::is_expired(it->second, server.node().local_now().to_ms())) return out;
  if (it->second.expire_at_ms) {  // expired once the server's clock passes that millisecond
    const TimePoint local_end = at_ms(*it->second.expire_at_ms, true);
    if (local_end != LockExposure::kNoChange)
      out.expires = server.node().clock().true_when(local_end, now);
  }
  if (probe.value_is_deadline_ms) {
    // GETSET's step 3 with a correct clock: held while the stored end is later than now.
    const std::string& v = it->second.value;
    int64_t deadline_ms = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), deadline_ms);
    if (ec != std::errc() || end != v.data() + v.size()) return out;  // not a lock
    const TimePoint correct_now = kLocalEpoch + (now - TimePoint{});
    if (deadline_ms <= correct_now.to_ms()) return out;
    const TimePoint local_deadline = at_ms(deadline_ms, false);
    if (local_deadline != LockExposure::kNoChange)
      out.expires = std::min(out.expires, now + (local_deadline - correct_now));
  }
  out.kind = ServerLockState::Kind::kHeld;
  LOCKSIM_ASSERT(out.expires >= now);
  return out;
}

void RedisDeployment::server_state(RedisNode& server, bool serving, const LockProbe& probe,
                                   ServerLockState& out) const {
  const Seen seen = see(server, probe);
  out.server = server.node().name();  // assignments: the strings keep their room
  out.kind = seen.kind;
  if (seen.holder != nullptr) {
    out.holder = *seen.holder;
  } else {
    out.holder.clear();
  }
  out.serving = serving;
  out.expires = seen.expires;
  queue_state(server, probe, out);
}

namespace {

// A stored timeout (a sorted set's score: unix ms from the writer's clock)
// and when a correct clock reads it. Scripts write whole milliseconds (a
// fraction is cut); a score past what a Lua number counts exactly is kept
// as none.
void read_timeout(std::optional<double> score, QueuedWaiter& out) {
  out.timeout_ms.reset();
  out.due = LockExposure::kNoChange;
  constexpr double kMsMax = 9.0e15;  // under 2^53, the last double that counts every ms
  if (!score || !(*score > -kMsMax && *score < kMsMax)) return;
  const int64_t ms = static_cast<int64_t>(*score);
  out.timeout_ms = ms;
  // A correct clock reads kLocalEpoch at the run's start (sim/clock.h).
  const TimePoint local = at_ms(std::max<int64_t>(ms, 0), false);
  if (local != LockExposure::kNoChange) out.due = TimePoint{} + (local - kLocalEpoch);
}

}  // namespace

void RedisDeployment::queue_state(RedisNode& server, const LockProbe& probe,
                                  ServerLockState& out) const {
  out.queue_length = 0;
  const std::deque<std::string>* list = nullptr;
  const SortedSet* timeouts = nullptr;
  if (!probe.queue_key.empty() && server.node().running()) {
    const auto& keys = server.server().keys();  // read-only: no lazy expiry
    const int64_t now_ms = server.node().local_now().to_ms();
    const auto q = keys.find(probe.queue_key);
    if (q != keys.end() && q->second.list && !Keyspace::is_expired(q->second, now_ms))
      list = &*q->second.list;
    const auto t = keys.find(probe.queue_timeouts_key);
    if (t != keys.end() && t->second.zset && !Keyspace::is_expired(t->second, now_ms))
      timeouts = &*t->second.zset;
  }
  const size_t kept = list ? std::min(list->size(), ServerLockState::kQueueKeptMax) : 0;
  out.queue.resize(kept);  // assignments below: the strings keep their room
  for (size_t i = 0; i < kept; ++i) {
    const std::string& id = (*list)[i];
    out.queue[i].id = id;
    read_timeout(timeouts ? timeouts->score(id) : std::nullopt, out.queue[i]);
  }
  if (list) out.queue_length = list->size();
  LOCKSIM_ASSERT(out.queue.size() <= out.queue_length);
}

std::optional<LockExposure> RedisDeployment::lock_free_for_fresh_contender(const LockProbe& probe) {
  LOCKSIM_ASSERT_MSG(probe.quorum >= 1 && probe.quorum <= groups_.size(),
                     "the quorum is checked against the masters before the run");
  size_t free = 0;
  TimePoint until = LockExposure::kNoChange;  // any group's change may change the count
  for (auto& g : groups_) {
    // After every event of a hold: see() copies no name or holder.
    const Seen s = see(g->current_primary(), probe);
    free += s.kind == ServerLockState::Kind::kAbsent || s.kind == ServerLockState::Kind::kExpired;
    if (s.kind == ServerLockState::Kind::kHeld) until = std::min(until, s.expires);
  }
  LOCKSIM_ASSERT(free <= groups_.size());
  LOCKSIM_ASSERT(until >= world_.now());
  return LockExposure{free >= probe.quorum, until};
}

std::optional<uint64_t> RedisDeployment::lock_state_stamp() const {
  // The World's count of changes (sim/change_count.h) covers everything
  // see() reads: each server's keys (Keyspace::version), each node's state
  // and clock, and each group's promotions. It also counts what see() does
  // not read (a replica's keys while no group fails over, a client's
  // clock): one more question each time, allowed (the stamp may grow more
  // often than the answer changes), and one load after every event of a
  // hold where summing five masters' counters cost 60 instructions.
  return world_.state_changes();
}

std::vector<ServerLockState> RedisDeployment::lock_states(const LockProbe& probe) {
  std::vector<ServerLockState> out;
  fill_lock_states(probe, out);
  return out;
}

void RedisDeployment::fill_lock_states(const LockProbe& probe, std::vector<ServerLockState>& out) {
  const size_t per_group = static_cast<size_t>(topology_.replicas) + 1;
  LOCKSIM_ASSERT(servers_.size() == groups_.size() * per_group);
  out.resize(servers_.size());
  for (size_t i = 0; i < servers_.size(); ++i) {
    RedisNode& server = *servers_[i];
    const bool serving = &groups_[i / per_group]->current_primary() == &server;
    server_state(server, serving, probe, out[i]);
  }
  LOCKSIM_ASSERT(out.size() == servers_.size());
}

}  // namespace locksim::sim::redis
