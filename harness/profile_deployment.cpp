#include "harness/profile_deployment.h"

#include <algorithm>

#include "algorithms/registry.h"
#include "env/assert.h"
#include "env/parse.h"
#include "harness/backends.h"
#include "history/history.h"

namespace locksim::harness {

Setting profile_row() {
  std::string hint;
  for (const auto& n : faults::profile_names()) hint += (hint.empty() ? "" : "|") + n;
  Setting s{"--profile",
            "profile",
            Setting::Kind::kText,
            hint + "[+...]",
            "fault profile: faults drawn from the seed, swarm style (combine with +; "
            "see docs/reference/faults.md)",
            false};
  s.parse = [](RunConfig& c, const std::string& text, const std::string& field) {
    faults::parse_profile(text, field);  // throws naming the field
    c.profile = text;
  };
  s.format = [](const RunConfig& c) { return c.profile; };
  return s;
}

namespace {

// Whether the config leaves the algorithm's `ttl` at a default longer than
// the run (false when it is given, shorter, or the algorithm has none).
bool default_lease_past_run(const RunConfig& config) {
  if (config.algorithm_params.count("ttl") != 0) return false;
  const algorithms::AlgorithmSpec* spec = algorithms::find_algorithm(config.algorithm);
  LOCKSIM_ASSERT_MSG(spec != nullptr, "validated before the run");
  for (const auto& p : spec->params) {
    if (p.name != "ttl") continue;
    return parse_duration(p.default_value, "ttl") > config.duration;
  }
  return false;
}

}  // namespace

RunConfig with_profile_deployment(const RunConfig& config) {
  RunConfig out = config;
  const auto parts = faults::parse_profile(config.profile, "--profile");
  if (faults::wants_failover(parts)) {
    const BackendSpec& backend = backend_of(config);
    if (backend.add_failover)
      backend.add_failover(out, faults::profile_replication_lag(config.seed));
  }
  if (const auto timeout = faults::profile_client_timeout(parts, config.seed)) {
    const BackendSpec& backend = backend_of(config);
    if (backend.set_client_timeout) backend.set_client_timeout(out, *timeout);
  }
  if (faults::must_outlast_lease(parts) && default_lease_past_run(config)) {
    out.algorithm_params["ttl"] =
        format_duration(faults::profile_drawn_lease(config.seed, config.workload.hold_max));
    LOCKSIM_ASSERT(!default_lease_past_run(out));  // so a second call changes nothing
  }
  LOCKSIM_ASSERT(out.seed == config.seed && out.algorithm == config.algorithm);
  return out;
}

std::optional<Duration> ttl_param(const RunConfig& config) {
  const algorithms::AlgorithmSpec* spec = algorithms::find_algorithm(config.algorithm);
  LOCKSIM_ASSERT_MSG(spec != nullptr, "validated before the run");
  const auto given = config.algorithm_params.find("ttl");
  if (given != config.algorithm_params.end()) {
    return parse_duration(given->second, config.param_field_prefix() + "ttl");
  }
  for (const auto& p : spec->params) {
    if (p.name == "ttl") return parse_duration(p.default_value, "ttl");
  }
  return std::nullopt;
}

Duration profile_lease(const RunConfig& config) {
  if (const std::optional<Duration> ttl = ttl_param(config)) return *ttl;
  const algorithms::AlgorithmSpec* spec = algorithms::find_algorithm(config.algorithm);
  LOCKSIM_ASSERT_MSG(spec != nullptr, "validated before the run");
  if (!spec->renewed_lease_param.empty()) {  // renewed like a session: the renewed lease
    const std::string& name = spec->renewed_lease_param;
    const auto given = config.algorithm_params.find(name);
    for (const auto& p : spec->params) {
      if (p.name != name) continue;
      const std::string& text =
          given != config.algorithm_params.end() ? given->second : p.default_value;
      return parse_duration(text, config.param_field_prefix() + name);
    }
    LOCKSIM_ASSERT_MSG(false, "renewed_lease_param names one of the algorithm's parameters");
  }
  const BackendSpec& backend = backend_of(config);
  const Duration lease = backend.lease ? backend.lease(config) : Duration::seconds(10);
  LOCKSIM_ASSERT(lease > Duration::zero());
  return lease;
}

faults::DeploymentView deployment_view(const RunConfig& config,
                                       const std::map<std::string, sim::Node*>& servers,
                                       const sim::Deployment::Roles& roles) {
  faults::DeploymentView view;
  for (int i = 0; i < config.workload.clients; ++i)
    view.clients.push_back(history::client_label(i));
  for (const auto& [name, node] : servers) {
    const bool observer =
        std::find(roles.observers.begin(), roles.observers.end(), name) != roles.observers.end();
    if (!observer) view.servers.push_back(name);
  }
  for (const auto& p : roles.primaries) {
    LOCKSIM_ASSERT_MSG(servers.count(p) == 1, "a primary is a named server");
    view.primaries.push_back(p);
  }
  view.lease = std::max(profile_lease(config), Duration::millis(1));
  view.run_length = config.duration;
  view.retransmission_limit = config.tcp.retransmission_limit;
  view.idle_lock = config.workload.idle_max > Duration::zero() ||
                   config.workload.clients < WorkloadParams{}.clients;
  LOCKSIM_ASSERT(!view.servers.empty() && !view.clients.empty());
  return view;
}

}  // namespace locksim::harness
