#include "harness/explain_run.h"

#include "algorithms/registry.h"
#include "env/assert.h"

namespace locksim::harness {

checkers::Story explain_result(const RunResult& result) {
  const algorithms::AlgorithmSpec* spec = algorithms::find_algorithm(result.algorithm);
  LOCKSIM_ASSERT_MSG(spec != nullptr, "a run's algorithm is in the registry");
  checkers::ExplainInput in;
  in.history = &result.history;
  in.verdicts = &result;
  in.trace = &result.lock_trace;
  in.algorithm = result.algorithm;
  in.backend = spec->backend;
  return checkers::explain(in);
}

}  // namespace locksim::harness
