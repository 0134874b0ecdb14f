#include "sim/zookeeper/zk_backend.h"

#include <cstdio>

#include "env/assert.h"
#include "env/parse.h"

namespace locksim::sim::zookeeper {

namespace {

// "16.000s": the report's precision for times on a server's clock.
std::string seconds_text(int64_t ns) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3fs", static_cast<double>(ns) / 1e9);
  return buf;
}

}  // namespace

ZkBackend::ZkBackend(World& world, Network& net, const ZkParams& params)
    : world_(world), deployment_(world, net, params) {}

void ZkBackend::name_nodes(std::map<std::string, Node*>& nodes) {
  const std::vector<std::string> names = deployment_.node_names();
  const std::vector<Node*> servers = deployment_.nodes();
  LOCKSIM_ASSERT(names.size() == servers.size());
  for (size_t i = 0; i < names.size(); ++i) nodes[names[i]] = servers[i];
}

ClientConnections ZkBackend::connect(Node& client) {
  LOCKSIM_ASSERT_MSG(clients_.count(client.name()) == 0, "one handle per client node");
  ClientConnections conns;
  auto zk = deployment_.connect_client(client, world_.rng().split(client.name() + "/zk"));
  clients_[client.name()] = zk.get();
  conns.zk = std::move(zk);
  return conns;
}

BackendCounters ZkBackend::counters() const {
  BackendCounters c;
  c.commands = deployment_.requests_handled();
  // The first leader is elected as the ensemble starts; later ones are failovers.
  c.failovers = deployment_.ensemble().elections() - 1;
  return c;
}

void ZkBackend::client_crashed(Node& client) {
  const auto it = clients_.find(client.name());
  LOCKSIM_ASSERT_MSG(it != clients_.end(), "a crashed client was connected by this backend");
  it->second->on_process_crash();
}

std::string ZkBackend::client_of(SessionId s) const {
  for (const auto& [name, client] : clients_) {
    for (SessionId mine : client->sessions()) {
      if (mine == s) return name;
    }
  }
  return "?";
}

std::vector<BackendNote> ZkBackend::notes() const {
  const ZkParams& p = deployment_.params();
  std::vector<BackendNote> out;
  out.emplace_back("zookeeper.negotiated_session_timeout",
                   format_duration(deployment_.negotiated_timeout()) + " (asked " +
                       format_duration(p.session_timeout) + ", clamped to [" +
                       format_duration(p.min_session_timeout()) + ", " +
                       format_duration(p.max_session_timeout()) + "] = [2, 20] x tick " +
                       format_duration(p.tick) + ")");
  const ZkEnsemble& ensemble = deployment_.ensemble();
  const std::vector<SessionExpiry>& expiries = ensemble.expiries();
  for (size_t i = 0; i < expiries.size() && i < kExpiriesListedMax; ++i) {
    const SessionExpiry& e = expiries[i];
    LOCKSIM_ASSERT_MSG(e.deadline_ns > e.last_heard_ns, "noted as such by the ensemble");
    out.emplace_back("zookeeper.session_expired[" + std::to_string(i) + "]",
                     client_of(e.session) + "'s session " + std::to_string(e.session) +
                         ": last heartbeat heard " + seconds_text(e.last_heard_ns) + ", deadline " +
                         seconds_text(e.deadline_ns) + " (zk-" + std::to_string(e.leader_id) +
                         "'s monotonic clock: last + T, rounded up to the tick); expired at " +
                         seconds_text(e.at.ns) + " true time");
  }
  if (ensemble.expiries_total() > static_cast<int64_t>(kExpiriesListedMax)) {
    out.emplace_back("zookeeper.sessions_expired", std::to_string(ensemble.expiries_total()));
  }
  return out;
}

}  // namespace locksim::sim::zookeeper
