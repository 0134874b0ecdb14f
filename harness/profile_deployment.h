// How a run meets its fault profile (faults/profile.h): the --profile row of
// the settings table, the deployment a profile needs, the lease it scales
// its faults by, and the view of the deployment it aims at. Nothing here
// names a backend or an algorithm: each backend's entry says what it adds for
// a failover and what its lease is (harness/backends.h).
#pragma once

#include <optional>

#include <map>
#include <string>
#include <vector>

#include "faults/profile.h"
#include "harness/run_config.h"
#include "harness/settings.h"
#include "sim/backend.h"
#include "sim/node.h"

namespace locksim::harness {

// The --profile row (scenario key "profile").
Setting profile_row();

// `config` as the run really has it: a profile with failover gets the
// backend's add_failover() (replicas and a failover monitor); with
// partition, the client timeout it draws; with pause or partition, when the
// algorithm's `ttl` is left at a default longer than the run, the `ttl` it
// draws (faults::profile_drawn_lease: no fault inside the run could outlast
// a one-year deadline). Idempotent, so the replay command of the result
// re-creates the same config. A value the user gave that it would change is
// refused before it runs (validate_profile_keeps_given).
RunConfig with_profile_deployment(const RunConfig& config);

// Whether the run's profile has failover (failover, pause+failover, ...),
// whose deployment adds a replica and turns the failover on: a setting
// that needs those is read, and --failover needs no --replicas of its own.
bool profile_deploys_failover(const RunConfig& config);

// Refuses a setting the user gave (config.given_paths) that the profile's
// deployment would change: --down-after 5s under --profile failover, which
// ran with 1 s and said nothing. Throws ConfigError on one line naming the
// setting as given, what the profile needs and what to do instead. A given
// value the deployment keeps passes: the replay command of a profile run
// carries the deployed values (they are with_profile_deployment's fixed
// point), and it must replay. Per seed: the failover profile's lag and the
// partition profile's timeout are drawn from it.
void validate_profile_keeps_given(const RunConfig& config);

// The algorithm's "ttl" parameter as the run has it (given, or its default),
// or nullopt for an algorithm without one (ZooKeeper's recipes lease by
// session). Throws ConfigError naming the parameter for a malformed value.
std::optional<Duration> ttl_param(const RunConfig& config);

// The time a profile's faults are scaled by: the algorithm's "ttl" parameter
// (given, or its default), else the backend's lease (a session timeout), else
// 10 s. Always positive.
Duration profile_lease(const RunConfig& config);

// What the profile may aim at: the clients, every named server that is not
// an observer (in name order), the deployment's primaries, the lease.
// `servers` are the deployment's named nodes (Deployment::name_nodes()).
faults::DeploymentView deployment_view(const RunConfig& config,
                                       const std::map<std::string, sim::Node*>& servers,
                                       const sim::Deployment::Roles& roles);

}  // namespace locksim::harness
