// The algorithms locksim knows, their parameters, and how to build one from
// text (CLI flags or a scenario file). Each entry is declared beside its
// algorithm (algorithm_spec.h); this is the list.
#pragma once

#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/algorithm_spec.h"

namespace locksim::algorithms {

// Every algorithm, in the order `locksim list` shows them: the built-in ones,
// then any registered. A deque, so an entry never moves once listed.
const std::deque<AlgorithmSpec>& all_algorithms();

// Adds an algorithm after the built-in ones, for a program of your own that
// links locksim's libraries (examples/, docs/how-to/add-an-algorithm.md).
// Call it before any run starts (the registry is not locked). Preconditions,
// asserted: a name no entry has, a `make`, a backend name.
void register_algorithm(AlgorithmSpec spec);
// nullptr when unknown. A name starting "script:" that is not yet listed is
// first handed to the script loader, if one is installed.
const AlgorithmSpec* find_algorithm(std::string_view name);
// Installs what loads a `script:FILE.json` name on demand (the harness's
// harness/script_file.h: it reads the file, validates it, and registers it
// with register_algorithm, or throws ConfigError naming the file and field).
// Lives outside algorithms/ because validation compiles Lua with the
// simulated Redis's interpreter, which algorithms/ may not include.
void set_script_loader(std::function<void(const std::string& name)> loader);
// "set-nx-lua" — the names, comma-separated, for error messages.
std::string algorithm_names();

}  // namespace locksim::algorithms
