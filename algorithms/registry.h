// The algorithms locksim knows, their parameters, and how to build one from
// text (CLI flags or a scenario file).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/lock_algorithm.h"

namespace locksim::algorithms {

using ParamValues = std::map<std::string, std::string>;  // name -> text, e.g. "ttl" -> "10s"

struct AlgorithmSpec {
  std::string name;
  std::string summary;
  std::vector<ParamInfo> params;
  // Independent Redis masters a run gives it unless told otherwise (Redlock: 5).
  int default_masters = 1;
  // The store it runs against: a name in harness/backends.h's list.
  std::string backend = "redis";
  // Builds the algorithm from `values` (missing names take the defaults).
  // Throws ConfigError naming `field_prefix + name` for a bad or unknown value.
  std::function<std::unique_ptr<LockAlgorithm>(const ParamValues& values,
                                               const std::string& field_prefix)>
      make;
};

const std::vector<AlgorithmSpec>& all_algorithms();
// nullptr when unknown.
const AlgorithmSpec* find_algorithm(std::string_view name);
// "set-nx-lua" — the names, comma-separated, for error messages.
std::string algorithm_names();

}  // namespace locksim::algorithms
