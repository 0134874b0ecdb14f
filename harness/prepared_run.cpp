#include "harness/prepared_run.h"

#include "env/assert.h"
#include "harness/profile_deployment.h"
#include "harness/workload_draw.h"

namespace locksim::harness {

PreparedRun prepare_run(const RunConfig& given) {
  validate(given);
  // What the workload draw and the profile add (clients, holds, replicas, a
  // timeout, a lease) is drawn within the bounds validation enforces, so the
  // result needs no second validation.
  PreparedRun prepared(with_profile_deployment(with_drawn_workload(given)));
  LOCKSIM_ASSERT(prepared.config().seed == given.seed);
  LOCKSIM_ASSERT(prepared.config().algorithm == given.algorithm);
  return prepared;
}

}  // namespace locksim::harness
