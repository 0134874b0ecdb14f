#include "live/live_backend.h"

#include "env/assert.h"
#include "env/parse.h"
#include "harness/settings.h"
#include "live/live_runner.h"

namespace locksim::live {

const std::vector<LiveBackend>& live_backends() {
  static const std::vector<LiveBackend> list = {redis_live_backend(), zookeeper_live_backend(),
                                                mysql_live_backend()};
  return list;
}

const LiveBackend& live_backend_of(const harness::BackendSpec& backend) {
  for (const LiveBackend& b : live_backends()) {
    if (b.name == backend.name) return b;
  }
  LOCKSIM_ASSERT_MSG(false, "every backend has a live side");
  return live_backends().front();
}

std::chrono::milliseconds link_latency(const harness::RunConfig& config) {
  const int64_t ns = config.link.latency_base.ns;
  LOCKSIM_ASSERT_MSG(ns >= 0, "run validation refuses a negative latency");
  constexpr int64_t kNsPerMs = 1'000'000;
  // Up to 1 ms is not carried: a loopback hop through the machine's
  // scheduling already takes up to about that, and --time-scale's 1 ms floor
  // turns the default 0.2 ms into 1 ms, which must not send every scaled run
  // through relays (nor refuse every scaled MySQL and ZooKeeper run).
  constexpr int64_t kCarriedMinNs = 2 * kNsPerMs;
  if (ns < kCarriedMinNs - kNsPerMs / 2) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds((ns + kNsPerMs / 2) / kNsPerMs);
}

void set_link_latency(TcpRelay& relay, std::chrono::milliseconds latency) {
  LOCKSIM_ASSERT(latency.count() > 0);
  relay.set_lag(latency, latency);
  relay.set_handshake(latency * 2);
}

void refuse_link_latency(const harness::RunConfig& config, const std::string& backend) {
  if (link_latency(config).count() == 0) return;
  throw ConfigError(harness::field_name(config, "network.latency_base") + ": live " + backend +
                    " runs carry no link latency (no relay on every client link), got " +
                    format_duration(config.link.latency_base) +
                    "; only Redis's and ZooKeeper's live links carry one");
}

int client_link_port(const harness::RunConfig& config, const std::string& client,
                     const std::string& server, int port, LiveTargets& targets,
                     std::vector<std::unique_ptr<TcpRelay>>& relays) {
  const std::chrono::milliseconds latency = link_latency(config);
  if (!needs_relays(config.faults) && latency.count() == 0) return port;
  relays.push_back(std::make_unique<TcpRelay>(port));
  if (latency.count() > 0) set_link_latency(*relays.back(), latency);
  targets.links[{client, server}] = relays.back().get();
  return relays.back()->port();
}

history::History run_live_clients(const harness::RunConfig& config,
                                  algorithms::LockAlgorithm& algorithm, harness::RunResult& result,
                                  std::function<std::unique_ptr<Env>(int client)> make_env) {
  LOCKSIM_ASSERT(make_env != nullptr);
  LiveOptions live_options;
  live_options.errors = &result.errors;
  live_options.make_env = std::move(make_env);
  return run_live(algorithm, config.workload, {}, config.duration, config.seed, live_options);
}

}  // namespace locksim::live
