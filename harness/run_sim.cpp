#include "harness/run_sim.h"

#include "env/assert.h"
#include "env/parse.h"
#include "checkers/linearizability.h"
#include "checkers/liveness_checker.h"
#include "checkers/mutex_checker.h"
#include "harness/profile_run.h"
#include "harness/settings.h"

namespace locksim::harness {

nlohmann::json config_to_json(const RunConfig& c) {
  RunConfig resolved = c;
  resolved.redis = resolved_topology(c);  // the masters the run really had
  return nlohmann::json::parse(settings_to_json(resolved).dump());
}

SimRunReport simulate_and_check(const RunConfig& given) {
  // The config as the run has it (a failover profile's replicas included),
  // so params and the replay command say what really ran.
  const RunConfig config = with_profile_deployment(given);
  SimRunReport report;
  report.output = run_simulation(config);
  RunResult& r = report.result;
  r.algorithm = config.algorithm;
  r.seed = config.seed;
  r.params = config_to_json(config);
  r.history = std::move(report.output.history);
  LOCKSIM_ASSERT_MSG(r.history.run_length <= config.duration, "a run ends by its duration");
  report.output.history = history::History{};
  r.mutex = checkers::check_mutex(r.history);
  r.liveness = checkers::check_liveness(r.history, config.stuck_after);
  r.linearizability.builtin = checkers::check_linearizable(r.history.ops);
  r.consequences = checkers::check_consequences(config.workload.store, report.output.store_log);
  r.exposure = checkers::check_exposure(r.history, report.output.exposure, r.mutex);
  fill_counts(r);
  r.events = static_cast<int64_t>(report.output.events);
  r.deadlocks = static_cast<int64_t>(report.output.deadlocks);
  r.errors = report.output.errors;
  r.replay_command = replay_command(config);
  r.backend_notes = report.output.backend_notes;
  r.profile = config.profile;
  for (const auto& e : report.output.profile_faults.events) r.profile_faults.push_back(e.describe());
  LOCKSIM_ASSERT_MSG(!r.profile.empty() || r.profile_faults.empty(),
                     "only a profile draws faults");
  return report;
}

}  // namespace locksim::harness
