#include "sim/mysql/mysql_deployment.h"

#include "env/assert.h"
#include "sim/clock.h"
#include "sim/mysql/lock_exposure.h"

namespace locksim::sim::mysql {

MysqlDeployment::MysqlDeployment(World& world, Network& net, const MysqlParams& params)
    : world_(world), net_(net), params_(params) {
  LOCKSIM_ASSERT(params.replicas >= 0 && params.replicas <= MysqlParams::kReplicasMax);
  LOCKSIM_ASSERT_MSG(!params.failover || params.replicas >= 1, "validated by the harness");
  LOCKSIM_ASSERT_MSG(!params.semi_sync || params.replicas >= 1, "validated by the harness");
  if (params.failover) monitor_ = std::make_unique<Node>(world, "mysql-monitor");
  std::vector<MysqlNode*> members;
  for (int r = 0; r <= params.replicas; ++r) {
    const std::string name = r == 0 ? "mysql-1" : "mysql-1-r" + std::to_string(r);
    servers_.push_back(std::make_unique<MysqlNode>(world, net, name, params));
    members.push_back(servers_.back().get());
  }
  group_ = std::make_unique<MysqlGroup>(world, net, "mysql-1", members, monitor_.get(), params);
  LOCKSIM_ASSERT(servers_.size() == static_cast<size_t>(params.replicas + 1));
}

void MysqlDeployment::name_nodes(std::map<std::string, Node*>& nodes) {
  for (auto& s : servers_) nodes[s->name()] = &s->node();
  if (monitor_) nodes[monitor_->name()] = monitor_.get();
}

MysqlNode* MysqlDeployment::server(const std::string& name) {
  for (auto& s : servers_) {
    if (s->name() == name) return s.get();
  }
  return nullptr;
}

ClientConnections MysqlDeployment::connect(Node& client) {
  ClientConnections out;
  auto connection =
      std::make_unique<MysqlConnection>(world_, net_, client, *group_, params_.client_timeout);
  const bool fresh = connections_.emplace(client.name(), connection.get()).second;
  LOCKSIM_ASSERT_MSG(fresh, "one connection per client");
  out.sql = std::move(connection);
  LOCKSIM_ASSERT(out.sql != nullptr);
  return out;
}

Deployment::Roles MysqlDeployment::roles() const {
  Roles roles;
  roles.primaries.push_back(group_->current_primary().name());
  if (monitor_) roles.observers.push_back(monitor_->name());
  LOCKSIM_ASSERT(roles.primaries.size() == 1);
  return roles;
}

void MysqlDeployment::client_crashed(Node& client) {
  const auto it = connections_.find(client.name());
  LOCKSIM_ASSERT_MSG(it != connections_.end(), "a crashed client was connected by this backend");
  it->second->close();
}

BackendCounters MysqlDeployment::counters() const {
  BackendCounters c;
  for (const auto& s : servers_) {
    c.commands += s->engine().statements();
    c.deadlocks += s->engine().deadlocks();
  }
  c.failovers = group_->failovers();
  return c;
}

std::optional<LockExposure> MysqlDeployment::lock_free_for_fresh_contender(const LockProbe& probe) {
  // A fresh contender asks whom clients are told is the primary.
  MysqlNode& primary = group_->published_primary();
  if (!primary.node().running()) return LockExposure{false};
  const TimePoint now = world_.now();
  return row_exposure(primary.engine(), probe.key, kLocalEpoch + (now - TimePoint{}), now);
}

std::optional<uint64_t> MysqlDeployment::lock_state_stamp() const {
  // The World's count of changes (see RedisDeployment's): it covers each
  // server's committed versions, state and clock, and where clients are
  // told the primary is.
  return world_.state_changes();
}

std::vector<ServerLockState> MysqlDeployment::lock_states(const LockProbe& probe) {
  std::vector<ServerLockState> out;
  fill_lock_states(probe, out);
  return out;
}

void MysqlDeployment::fill_lock_states(const LockProbe& probe, std::vector<ServerLockState>& out) {
  const TimePoint now = world_.now();
  const MysqlNode* published = &group_->published_primary();
  out.resize(servers_.size());
  for (size_t i = 0; i < servers_.size(); ++i) {
    MysqlNode& s = *servers_[i];
    ServerLockState& state = out[i];  // assigned over: its strings keep their room
    if (s.node().running()) {
      fill_row_lock_state(s.engine(), probe.key, kLocalEpoch + (now - TimePoint{}), now, state);
    } else {
      state.kind = ServerLockState::Kind::kDown;
      state.holder.clear();
      state.expires = LockExposure::kNoChange;
    }
    state.server = s.node().name();
    state.serving = &s == published;
  }
  LOCKSIM_ASSERT(out.size() == servers_.size());
}

std::vector<BackendNote> MysqlDeployment::notes() const {
  std::vector<BackendNote> out;
  uint64_t timeouts = 0;
  for (const auto& s : servers_) timeouts += s->semi_sync_timeouts();
  if (timeouts > 0) {
    out.emplace_back("mysql.semi_sync_timeouts",
                     std::to_string(timeouts) +
                         " semi-synchronous waits timed out; the primary fell back to "
                         "asynchronous replication");
  }
  return out;
}

}  // namespace locksim::sim::mysql
