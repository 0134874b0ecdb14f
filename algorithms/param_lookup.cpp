#include "algorithms/param_lookup.h"

#include <algorithm>

#include "algorithms/registry.h"

namespace locksim::algorithms {

bool has_param(const std::string& algorithm, std::string_view name) {
  const AlgorithmSpec* spec = find_algorithm(algorithm);
  if (spec == nullptr) return false;
  return std::any_of(spec->params.begin(), spec->params.end(),
                     [name](const ParamInfo& p) { return p.name == name; });
}

}  // namespace locksim::algorithms
