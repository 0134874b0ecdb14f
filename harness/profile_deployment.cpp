#include "harness/profile_deployment.h"

#include <algorithm>

#include "algorithms/param_reader.h"
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

namespace {

// Why the profile sets a setting of a replicated topology or a client (by
// its key: Redis's and MySQL's share them) to `deployed`, and what the user
// can do instead of giving another value.
struct ProfileNeed {
  std::string needs;
  std::string instead;
};

ProfileNeed profile_need(const RunConfig& c, const Setting& s, const std::string& deployed) {
  const std::string key = s.json_path.substr(s.json_path.find('.') + 1);
  const std::string seed = "seed " + std::to_string(c.seed);
  const std::string fault = short_field_name(c, "faults");
  if (key == "replicas") return {"at least 1, a replica to promote", "run without the profile"};
  if (key == "failover") return {"it on, to promote a replica", "run without the profile"};
  if (key == "replication_lag") {
    return {"at least " + deployed + " (" + seed +
                "'s draw), so a write acknowledged just before the crash can miss the replica",
            "give at least " + deployed};
  }
  if (key == "down_after") {
    return {"at most " + format_duration(kFailoverProfileDownAfterMax) +
                " so the failover lands inside a holder's critical section",
            "give a failover with " + fault + " instead"};
  }
  if (key == "discovery_delay") {
    return {"at most " + format_duration(kFailoverProfileDiscoveryDelayMax) +
                " so clients reach the promoted replica while the holder still holds",
            "give a failover with " + fault + " instead"};
  }
  if (key == "timeout") {
    return {"the client timeout " + seed + " draws (" + deployed +
                ") so its cuts meet clients that give up and clients that wait",
            "give a partition with " + fault + " instead"};
  }
  return {"it set to " + deployed, "run without the profile"};  // a setting a new deployment sets
}

}  // namespace

bool profile_deploys_failover(const RunConfig& config) {
  // The profile's row checked the text when it was read.
  return !config.profile.empty() &&
         faults::wants_failover(faults::parse_profile(config.profile, "--profile"));
}

void validate_profile_keeps_given(const RunConfig& config) {
  // A sweep's runs give nothing: they skip the deployment made here to compare.
  if (config.profile.empty() || config.given_paths.empty() || config.profile_may_replace_given) {
    return;
  }
  const RunConfig deployed = with_profile_deployment(config);
  for (const Setting& s : all_settings()) {
    // Lists and parameters have no format: the profile only adds a ttl nobody gave.
    if (!s.format || config.given_paths.count(s.json_path) == 0) continue;
    const std::string given = s.format(config);
    const std::string replaced = s.format(deployed);
    if (replaced == given) continue;
    const ProfileNeed need = profile_need(config, s, replaced);
    throw ConfigError(field_name(config, s) + " " + given + ": " +
                      short_field_name(config, "profile") + " " + config.profile + " needs " +
                      need.needs + "; leave " + short_field_name(config, s.json_path) +
                      " out, or " + need.instead);
  }
}

namespace {

// The duration parameter `name` of the run's algorithm: the value given, else
// its default; none when the algorithm has no such parameter.
std::optional<Duration> duration_param(const RunConfig& config, const std::string& name) {
  const algorithms::AlgorithmSpec* spec = algorithms::find_algorithm(config.algorithm);
  LOCKSIM_ASSERT_MSG(spec != nullptr, "validated before the run");
  const auto given = config.algorithm_params.find(name);
  if (given != config.algorithm_params.end()) {
    return parse_duration(given->second,
                          algorithms::param_field(config.param_field_prefix(), name));
  }
  for (const auto& p : spec->params) {
    if (p.name == name) return parse_duration(p.default_value, name);
  }
  return std::nullopt;
}

}  // namespace

std::optional<Duration> ttl_param(const RunConfig& config) {
  return duration_param(config, "ttl");
}

Duration profile_lease(const RunConfig& config) {
  if (const std::optional<Duration> ttl = ttl_param(config)) return *ttl;
  // A lease the client renews: as a session, what a fault must outlast.
  const std::string& renewed = algorithms::find_algorithm(config.algorithm)->renewed_lease_param;
  if (!renewed.empty()) {
    const std::optional<Duration> lease = duration_param(config, renewed);
    LOCKSIM_ASSERT_MSG(lease.has_value(), "renewed_lease_param names one of the parameters");
    return *lease;
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
