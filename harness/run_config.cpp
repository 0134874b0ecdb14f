#include "harness/run_config.h"

#include "env/assert.h"
#include "env/parse.h"
#include "harness/backends.h"
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

}  // namespace

void validate(const RunConfig& c) {
  validate_each_value(c);
  const algorithms::AlgorithmSpec* spec = algorithms::find_algorithm(c.algorithm);
  LOCKSIM_ASSERT_MSG(spec != nullptr, "checked by the algorithm's row");
  // Builds the algorithm, so a bad or unknown parameter fails before any work.
  (void)spec->make(c.algorithm_params, c.param_field_prefix());
  backend_of(c).validate(c);
}

}  // namespace locksim::harness
