// The algorithms locksim knows, their parameters, and how to build one from
// text (CLI flags or a scenario file). Each entry is declared beside its
// algorithm (algorithm_spec.h); this is the list.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "algorithms/algorithm_spec.h"

namespace locksim::algorithms {

// Every algorithm, in the order `locksim list` shows them.
const std::vector<AlgorithmSpec>& all_algorithms();
// nullptr when unknown.
const AlgorithmSpec* find_algorithm(std::string_view name);
// "set-nx-lua" — the names, comma-separated, for error messages.
std::string algorithm_names();

}  // namespace locksim::algorithms
