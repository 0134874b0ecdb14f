#include "algorithms/param_reader.h"

#include <charconv>

#include "env/assert.h"
#include "env/parse.h"

namespace locksim::algorithms {

namespace {

bool declares(const AlgorithmSpec& spec, const std::string& name) {
  for (const ParamInfo& p : spec.params) {
    if (p.name == name) return true;
  }
  return false;
}

}  // namespace

std::string param_field(const std::string& prefix, const std::string& name) {
  return prefix == "--param " && name == "ttl" ? "--ttl" : prefix + name;
}

ParamReader::ParamReader(const AlgorithmSpec& spec, const ParamValues& values,
                         const std::string& prefix)
    : spec_(spec), values_(values), prefix_(prefix) {
  for (const auto& [name, value] : values) {
    if (!declares(spec, name)) {
      std::string names;
      for (const ParamInfo& p : spec.params) names += (names.empty() ? "" : ", ") + p.name;
      throw ConfigError(param_field(prefix, name) + ": not a parameter of " + spec.name +
                        " (it has: " + names + ")");
    }
  }
}

std::string ParamReader::text(const std::string& name) const {
  auto it = values_.find(name);
  if (it != values_.end()) return it->second;
  for (const ParamInfo& p : spec_.params) {
    if (p.name == name) return p.default_value;
  }
  LOCKSIM_ASSERT_MSG(false, "an algorithm reads only the parameters its spec declares");
  return "";
}

Duration ParamReader::positive_duration(const std::string& name) const {
  const Duration d = parse_duration(text(name), field(name));
  if (d <= Duration::zero()) {
    throw ConfigError(field(name) + ": expected a positive duration, got '" + text(name) + "'");
  }
  return d;
}

Duration ParamReader::duration(const std::string& name) const {
  return parse_duration(text(name), field(name));
}

std::pair<Duration, Duration> ParamReader::range(const std::string& name) const {
  return parse_duration_range(text(name), field(name));
}

int64_t ParamReader::integer(const std::string& name, int64_t lo, int64_t hi) const {
  return parse_integer(text(name), field(name), lo, hi);
}

double ParamReader::parse_double(const std::string& name, double lo, double hi,
                                 const std::string& range_text) const {
  const std::string t = text(name);
  double v = 0;
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  // Written so that NaN fails too.
  if (ec != std::errc() || ptr != t.data() + t.size() || !(v >= lo && v < hi)) {
    throw ConfigError(field(name) + ": expected a number in " + range_text + ", got '" + t + "'");
  }
  return v;
}

}  // namespace locksim::algorithms
