#include "algorithms/registry.h"

#include <charconv>

#include "algorithms/getset_timestamp.h"
#include "algorithms/naive_setnx.h"
#include "algorithms/redlock.h"
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
  // A decimal number in [lo, hi); `range_text` is how the message shows it.
  double parse_double(const std::string& name, double lo, double hi,
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

  AlgorithmSpec naive_setnx;
  naive_setnx.name = "naive-setnx";
  naive_setnx.summary =
      "SETNX key token, then a separate EXPIRE (not atomic); release by plain DEL";
  naive_setnx.params = {
      {"ttl", "10s", "lock expiry, set by EXPIRE in whole seconds (rounded up)"},
      {"max-attempts", "20", "SETNX attempts per acquire before giving up"},
      {"retry", "50ms..150ms", "random backoff between attempts, uniform in the range"},
      {"expire-delay", "0s", "pause between SETNX and EXPIRE, widening the no-expiry window"},
  };
  naive_setnx.make = [](const ParamValues& values, const std::string& prefix) {
    const AlgorithmSpec& self = *find_algorithm("naive-setnx");
    ParamReader r(self, values, prefix);
    NaiveSetnx::Params p;
    p.ttl = r.positive_duration("ttl");
    p.max_attempts = static_cast<int>(r.integer("max-attempts", 1, 10'000));
    std::tie(p.retry_min, p.retry_max) = r.range("retry");
    p.expire_delay = parse_duration(r.text("expire-delay"), r.field("expire-delay"));
    return std::unique_ptr<LockAlgorithm>(new NaiveSetnx(p));
  };
  specs.push_back(std::move(naive_setnx));

  AlgorithmSpec getset;
  getset.name = "getset-timestamp";
  getset.summary =
      "SETNX key expiry-timestamp from the client clock; take over expired locks with GETSET";
  getset.params = {
      {"ttl", "10s", "added to the client's clock to make the stored expiry timestamp"},
      {"max-attempts", "20", "acquire attempts before giving up"},
      {"retry", "50ms..150ms", "random backoff between attempts, uniform in the range"},
  };
  getset.make = [](const ParamValues& values, const std::string& prefix) {
    const AlgorithmSpec& self = *find_algorithm("getset-timestamp");
    ParamReader r(self, values, prefix);
    GetsetTimestamp::Params p;
    p.ttl = r.positive_duration("ttl");
    p.max_attempts = static_cast<int>(r.integer("max-attempts", 1, 10'000));
    std::tie(p.retry_min, p.retry_max) = r.range("retry");
    return std::unique_ptr<LockAlgorithm>(new GetsetTimestamp(p));
  };
  specs.push_back(std::move(getset));

  AlgorithmSpec redlock;
  redlock.name = "redlock";
  redlock.default_masters = 5;
  redlock.summary =
      "SET NX PX on every one of N independent masters; held with a quorum and time left";
  redlock.params = {
      {"ttl", "10s", "lock expiry (PX) set on each node"},
      {"quorum", "auto", "nodes that must agree: auto (N/2+1) or a number from 1 to N"},
      {"drift-factor", "0.01", "validity = ttl - elapsed - (ttl * drift-factor + 2ms)"},
      {"max-attempts", "3", "rounds over all nodes per acquire before giving up"},
      {"retry", "50ms..200ms", "random delay between rounds, uniform in the range"},
  };
  redlock.make = [](const ParamValues& values, const std::string& prefix) {
    const AlgorithmSpec& self = *find_algorithm("redlock");
    ParamReader r(self, values, prefix);
    Redlock::Params p;
    p.ttl = r.positive_duration("ttl");
    // The node count is the run's, not the algorithm's: quorum <= N is
    // checked by Redlock::validate once the harness knows N.
    const std::string quorum = r.text("quorum");
    if (quorum != "auto") {
      constexpr int64_t kMaxQuorum = 1'000;
      int64_t q = 0;
      const auto [ptr, ec] = std::from_chars(quorum.data(), quorum.data() + quorum.size(), q);
      if (ec != std::errc() || ptr != quorum.data() + quorum.size() || q < 1 || q > kMaxQuorum) {
        throw ConfigError(r.field("quorum") + ": expected 'auto' or a whole number from 1 to " +
                          std::to_string(kMaxQuorum) + ", got '" + quorum + "'");
      }
      p.quorum = static_cast<size_t>(q);
    }
    p.drift_factor = r.parse_double("drift-factor", 0.0, 1.0, "[0, 1)");
    p.max_attempts = static_cast<int>(r.integer("max-attempts", 1, 10'000));
    std::tie(p.retry_min, p.retry_max) = r.range("retry");
    return std::unique_ptr<LockAlgorithm>(new Redlock(p));
  };
  specs.push_back(std::move(redlock));

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
