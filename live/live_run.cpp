#include "live/live_run.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "checkers/checker_list.h"
#include "env/parse.h"
#include "harness/backends.h"
#include "harness/run.h"
#include "harness/settings.h"
#include "live/live_backend.h"
#include "live/live_runner.h"

namespace locksim::live {

void check_live_run(const harness::RunConfig& config) {
  const LiveBackend& backend = live_backend_of(harness::backend_of(config));
  if (!config.faults.events.empty() && !backend.applies_faults) {
    throw ConfigError(config.fault_field_prefix() +
                      ": live faults run on Redis and MySQL only for now (" + backend.name +
                      ": simulation-only)");
  }
  if (!config.profile.empty()) {
    throw ConfigError(
        "--profile: a fault profile draws its faults in the simulation only; give "
        "live its faults one by one (--fault)");
  }
  backend.refuse_unsupported(config);
  // A scenario file's loss: real TCP on loopback loses nothing, so live would
  // ignore it and `agree` compare two different runs, calling the difference
  // the lock's. (network.retransmission_limit and redis.rdb_interval, which
  // live cannot apply either, are not refused: --time-scale moves their
  // defaults, and no shipped scenario sets them; the docs say so.)
  if (config.link.loss_probability > 0) {
    const harness::Setting& loss = *harness::find_setting_by_path("network.loss");
    throw ConfigError(harness::field_name(config, loss) +
                      ": simulation-only (live runs on real TCP and servers); got " +
                      loss.format(config) + ", live needs the default 0");
  }
}

namespace {

// Judges a live history (whole, or cut by an interrupt) as a simulated one is.
void judge(const harness::RunConfig& config, harness::RunResult& r) {
  r.algorithm = config.algorithm;
  r.seed = config.seed;
  r.params = harness::config_to_json(config);
  r.params["mode"] = "live";
  // The same checker list as a simulated run, without what only the
  // simulation records (the guarded store's log, exposure samples).
  checkers::Recorded recorded;
  recorded.history = &r.history;
  recorded.stuck_after = config.stuck_after;
  recorded.hold_max = config.workload.hold_max;
  recorded.errors = &r.errors;
  static_cast<checkers::Verdicts&>(r) = checkers::check_recorded(recorded);
  harness::fill_counts(r);
  r.replay_command = "(live runs depend on real timing and are not replayable byte for byte)";
}

}  // namespace

harness::RunResult run_live_and_check(const harness::PreparedRun& run) {
  const harness::RunConfig& config = run.config();
  check_live_run(config);
  const LiveBackend& backend = live_backend_of(harness::backend_of(config));
  auto algorithm = algorithms::find_algorithm(config.algorithm)
                       ->make(config.algorithm_params, config.param_field_prefix());

  harness::RunResult r;
  r.history = backend.run(config, *algorithm, r);
  judge(config, r);
  return r;
}

std::optional<harness::RunResult> interrupted_live_result(const harness::RunConfig& config) {
  std::optional<history::History> cut = interrupted_live_history();
  if (!cut) return std::nullopt;
  harness::RunResult r;
  r.history = std::move(*cut);
  judge(config, r);
  return r;
}

}  // namespace locksim::live
