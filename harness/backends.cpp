#include "harness/backends.h"

#include "algorithms/registry.h"
#include "env/assert.h"

namespace locksim::harness {

const std::vector<BackendSpec>& all_backends() {
  static const std::vector<BackendSpec> backends = {redis_backend(), mysql_backend(),
                                                     zookeeper_backend()};
  return backends;
}

const BackendSpec& backend_of(const RunConfig& config) {
  const algorithms::AlgorithmSpec* spec = algorithms::find_algorithm(config.algorithm);
  LOCKSIM_ASSERT_MSG(spec != nullptr, "the algorithm is checked when it is parsed");
  for (const BackendSpec& b : all_backends()) {
    if (b.name == spec->backend) return b;
  }
  LOCKSIM_ASSERT_MSG(false, "every algorithm names a listed backend");
  return all_backends().front();
}

}  // namespace locksim::harness
