#include "harness/run_config.h"

#include "env/assert.h"
#include "env/parse.h"
#include "harness/backends.h"
#include "harness/profile_deployment.h"
#include "harness/setting_needs.h"
#include "harness/settings.h"

namespace locksim::harness {

sim::redis::Topology resolved_topology(const RunConfig& c) {
  sim::redis::Topology t = c.redis;
  const algorithms::AlgorithmSpec* spec = algorithms::find_algorithm(c.algorithm);
  if (t.masters == 0) t.masters = spec != nullptr ? spec->default_masters : 1;
  LOCKSIM_ASSERT(t.masters >= 1);
  return t;
}

namespace {

// Every value through its own row's parser again: a config built in code
// (tests, profiles) is held to exactly the ranges a user's input is.
void validate_each_value(const RunConfig& c) {
  RunConfig copy;
  copy.source = c.source;
  for (const Setting& s : all_settings()) {
    if (s.items) {
      for (const std::string& item : s.items(c)) s.parse(copy, item, field_name(c, s));
    } else {
      s.parse(copy, s.format(c), field_name(c, s));
    }
  }
}

// A fault the run never reaches is a schedule that says more than the run
// does (a fault at 169 h in a 2 s run ran as a run without it).
void validate_fault_times(const RunConfig& c) {
  for (size_t i = 0; i < c.faults.events.size(); ++i) {
    const Duration at = c.faults.events[i].at;
    if (at < c.duration) continue;
    throw ConfigError(c.fault_field_prefix() + "[" + std::to_string(i) + "]: at " +
                      format_duration(at) + " is not inside the run (" + field_name(c, "duration") +
                      " " + format_duration(c.duration) + "); expected a time before its end");
  }
}

// Another backend's setting changes nothing in the run (--replicas under
// mysql-center ran without a replica, and said nothing): refused, naming the
// backend the algorithm runs on: one asked for (asks_for: a flag even at its
// default), or any off its default.
void validate_backend_of_settings(const RunConfig& c) {
  const RunConfig defaults;
  for (const Setting& s : all_settings()) {
    if (!s.format || !belongs_to_other_backend(s, c)) continue;
    if (!asks_for(c, s) && s.format(c) == s.format(defaults)) continue;
    const std::string section = backend_section(s);
    throw ConfigError(field_name(c, s) + ": a " + section + " setting, but " + c.algorithm +
                      " runs on " + algorithms::find_algorithm(c.algorithm)->backend +
                      "; expected it left out (or an algorithm that runs on " + section + ")");
  }
}

// A fencing check with no guarded store checked nothing and said nothing
// (--fencing write-check without --workload ran as a run without it).
void validate_fencing_has_a_store(const RunConfig& c) {
  const ResourceParams& store = c.workload.store;
  if (store.fencing == Fencing::kNone || store.workload != Workload::kNone) return;
  throw ConfigError(field_name(c, "resource.fencing") +
                    ": the guarded store checks tokens, but there is no store; expected " +
                    field_name(c, "resource.workload") +
                    " register, counter or inventory beside it");
}

}  // namespace

void validate(const RunConfig& c) {
  validate_each_value(c);
  validate_fault_times(c);
  validate_backend_of_settings(c);
  validate_fencing_has_a_store(c);
  const algorithms::AlgorithmSpec* spec = algorithms::find_algorithm(c.algorithm);
  LOCKSIM_ASSERT_MSG(spec != nullptr, "checked by the algorithm's row");
  // Builds the algorithm, so a bad or unknown parameter fails before any work.
  (void)spec->make(c.algorithm_params, c.param_field_prefix());
  backend_of(c).validate(c);
  // What the user gave, against the rest of the run (RunConfig::given_paths):
  // read by it, and left as given by its fault profile.
  validate_given_are_read(c);
  validate_profile_keeps_given(c);
}

}  // namespace locksim::harness
