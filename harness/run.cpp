#include "harness/run.h"

#include "env/assert.h"
#include "env/parse.h"
#include "harness/backends.h"
#include "harness/settings.h"

namespace locksim::harness {

nlohmann::json config_to_json(const RunConfig& c) {
  RunConfig resolved = c;
  // The masters a Redis run really had. Another backend's run has none: its
  // "auto" is kept, so the params read back as a scenario file (a resolved
  // 1 was "a redis setting, but zk-curator runs on zookeeper").
  if (backend_of(c).name == "redis") resolved.redis = resolved_topology(c);
  // Converted, not printed and parsed back (a quarter of a million
  // instructions a run, 2.8 % of a sweep): the same values, keys sorted.
  // Only the kind of a non-negative integer differs (signed here, unsigned
  // from the parser), which prints the same.
  return nlohmann::json(settings_to_json(resolved));
}

SimRunReport run_prepared(const PreparedRun& prepared, const RunExtras& extras) {
  const RunConfig& config = prepared.config();
  SimRunReport report;
  SimWatch watch;
  watch.trace_lock = extras.trace_lock;
  watch.poll = extras.poll;
  report.output = run_simulation(prepared, watch);
  SimOutput& out = report.output;
  LOCKSIM_ASSERT_MSG(out.history.run_length <= config.duration, "a run ends by its duration");
  checkers::Recorded recorded;
  recorded.history = &out.history;
  recorded.stuck_after = config.stuck_after;
  recorded.hold_max = config.workload.hold_max;
  recorded.store = config.workload.store;
  recorded.store_log = &out.store_log;
  recorded.exposure = &out.exposure;
  recorded.errors = &out.errors;
  recorded.knossos = extras.knossos;
  RunResult& r = report.result;
  static_cast<checkers::Verdicts&>(r) = checkers::check_recorded(recorded);
  r.algorithm = config.algorithm;
  r.seed = config.seed;
  r.params = config_to_json(config);
  r.history = std::move(out.history);
  out.history = history::History{};
  fill_counts(r);
  r.events = static_cast<int64_t>(out.events);
  r.deadlocks = static_cast<int64_t>(out.deadlocks);
  r.errors = std::move(out.errors);
  r.replay_command = extras.replay_command.empty() ? replay_command(config) : extras.replay_command;
  r.backend_notes = std::move(out.backend_notes);
  r.profile = config.profile;
  r.profile_faults = std::move(out.profile_faults);
  r.lock_trace = std::move(out.lock_trace);
  LOCKSIM_ASSERT_MSG(!r.profile.empty() || r.profile_faults.events.empty(),
                     "only a profile draws faults");
  return report;
}

SimRunReport simulate_and_check(const RunConfig& config, const RunExtras& extras) {
  return run_prepared(prepare_run(config), extras);
}

}  // namespace locksim::harness
