#include "algorithms/registry.h"

#include "algorithms/set_nx_lua.h"
#include "env/parse.h"

namespace locksim::algorithms {

namespace {

// Looks up a value, falling back to the spec's default; rejects names the
// algorithm does not have, so a typo never silently runs the default.
class ParamReader {
 public:
  ParamReader(const AlgorithmSpec& spec, const ParamValues& values, const std::string& prefix)
      : spec_(spec), values_(values), prefix_(prefix) {
    for (const auto& [name, value] : values) {
      bool known = false;
      for (const ParamInfo& p : spec.params) known = known || p.name == name;
      if (!known) {
        std::string names;
        for (const ParamInfo& p : spec.params) names += (names.empty() ? "" : ", ") + p.name;
        throw ConfigError(prefix + name + ": not a parameter of " + spec.name +
                          " (it has: " + names + ")");
      }
    }
  }

  std::string text(const std::string& name) const {
    auto it = values_.find(name);
    if (it != values_.end()) return it->second;
    for (const ParamInfo& p : spec_.params) {
      if (p.name == name) return p.default_value;
    }
    return "";
  }
  std::string field(const std::string& name) const { return prefix_ + name; }

  Duration positive_duration(const std::string& name) const {
    const Duration d = parse_duration(text(name), field(name));
    if (d <= Duration::zero()) {
      throw ConfigError(field(name) + ": expected a positive duration, got '" + text(name) + "'");
    }
    return d;
  }
  std::pair<Duration, Duration> range(const std::string& name) const {
    return parse_duration_range(text(name), field(name));
  }
  int64_t integer(const std::string& name, int64_t lo, int64_t hi) const {
    return parse_integer(text(name), field(name), lo, hi);
  }

 private:
  const AlgorithmSpec& spec_;
  const ParamValues& values_;
  std::string prefix_;
};

std::vector<AlgorithmSpec> build_specs() {
  std::vector<AlgorithmSpec> specs;

  AlgorithmSpec set_nx_lua;
  set_nx_lua.name = "set-nx-lua";
  set_nx_lua.summary =
      "SET key token NX PX ttl on one Redis master; release by Lua compare-and-delete";
  set_nx_lua.params = {
      {"ttl", "10s", "lock expiry (PX) set with each acquire"},
      {"max-attempts", "20", "SET attempts per acquire before giving up"},
      {"retry", "50ms..150ms", "random backoff between attempts, uniform in the range"},
  };
  set_nx_lua.make = [](const ParamValues& values, const std::string& prefix) {
    const AlgorithmSpec& self = *find_algorithm("set-nx-lua");
    ParamReader r(self, values, prefix);
    SetNxLua::Params p;
    p.ttl = r.positive_duration("ttl");
    p.max_attempts = static_cast<int>(r.integer("max-attempts", 1, 10'000));
    std::tie(p.retry_min, p.retry_max) = r.range("retry");
    return std::unique_ptr<LockAlgorithm>(new SetNxLua(p));
  };
  specs.push_back(std::move(set_nx_lua));

  return specs;
}

}  // namespace

const std::vector<AlgorithmSpec>& all_algorithms() {
  static const std::vector<AlgorithmSpec> specs = build_specs();
  return specs;
}

const AlgorithmSpec* find_algorithm(std::string_view name) {
  for (const AlgorithmSpec& s : all_algorithms()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string algorithm_names() {
  std::string out;
  for (const AlgorithmSpec& s : all_algorithms()) out += (out.empty() ? "" : ", ") + s.name;
  return out;
}

}  // namespace locksim::algorithms
