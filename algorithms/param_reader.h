// Reads an algorithm's parameters from text, for its AlgorithmSpec::make.
//
// Every value is looked up by name, falling back to the default the spec
// declares; a name the spec does not declare is rejected up front, so a typo
// never silently runs the default. Every failure is a ConfigError naming the
// field as the user wrote it (`prefix` + name: "--ttl" on the command line,
// "my.json: params.ttl" in a scenario).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "algorithms/algorithm_spec.h"
#include "env/time.h"

namespace locksim::algorithms {

// How an error names parameter `name` given under `prefix`: "FILE: params.ttl"
// in a scenario file; on the command line "--param NAME" (no flag "--quorum"
// exists to name), but "--ttl" for ttl, the one parameter with a flag of its
// own ("--ttl D" is short for "--param ttl=D").
std::string param_field(const std::string& prefix, const std::string& name);

class ParamReader {
 public:
  // Throws ConfigError if `values` names a parameter `spec` does not have.
  // Keeps references to `spec` and `values`: both must outlive the reader.
  ParamReader(const AlgorithmSpec& spec, const ParamValues& values, const std::string& prefix);

  // The text given for `name`, else the spec's default. Precondition: the
  // spec declares `name` (a misspelt name in an algorithm is a bug).
  std::string text(const std::string& name) const;
  // How error messages name the parameter (param_field).
  std::string field(const std::string& name) const { return param_field(prefix_, name); }

  // A duration > 0 ("10s").
  Duration positive_duration(const std::string& name) const;
  // A duration >= 0 with its unit ("0s", "250ms"): parse_duration takes no sign.
  Duration duration(const std::string& name) const;
  // "LO..HI" with LO <= HI, or a single duration.
  std::pair<Duration, Duration> range(const std::string& name) const;
  // A whole number in [lo, hi].
  int64_t integer(const std::string& name, int64_t lo, int64_t hi) const;
  // A decimal number in [lo, hi); `range_text` is how the message shows it.
  double parse_double(const std::string& name, double lo, double hi,
                      const std::string& range_text) const;

 private:
  const AlgorithmSpec& spec_;
  const ParamValues& values_;
  std::string prefix_;
};

}  // namespace locksim::algorithms
