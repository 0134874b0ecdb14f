#include "harness/scenario.h"

#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "env/parse.h"

namespace locksim::harness {

namespace {

using Json = nlohmann::json;

// Reads fields of one JSON object, naming each by its path in errors and
// rejecting keys nobody asked for.
class Fields {
 public:
  Fields(const Json& j, std::string path, const std::string& source)
      : j_(j), path_(std::move(path)), source_(source) {
    if (!j_.is_object()) fail(path_.empty() ? "(top level)" : path_, "an object", j_.dump());
  }

  [[noreturn]] void fail(const std::string& field, const std::string& expected,
                         const std::string& got) const {
    throw ConfigError(source_ + ": " + field + ": expected " + expected + ", got " + got);
  }
  std::string field(const std::string& key) const { return path_ + key; }
  bool has(const std::string& key) {
    seen_.insert(key);
    return j_.contains(key);
  }
  const Json& at(const std::string& key) {
    seen_.insert(key);
    return j_.at(key);
  }

  std::string string(const std::string& key) {
    const Json& v = at(key);
    if (!v.is_string()) fail(field(key), "a string", v.dump());
    return v.get<std::string>();
  }
  Duration duration(const std::string& key) {
    return parse_duration(string(key), source_ + ": " + field(key));
  }
  int64_t integer(const std::string& key, int64_t lo, int64_t hi) {
    const Json& v = at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi) {
      fail(field(key), "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi),
           v.dump());
    }
    return v.get<int64_t>();
  }
  bool boolean(const std::string& key) {
    const Json& v = at(key);
    if (!v.is_boolean()) fail(field(key), "true or false", v.dump());
    return v.get<bool>();
  }
  double number(const std::string& key, double lo, double hi) {
    const Json& v = at(key);
    if (!v.is_number() || v.get<double>() < lo || v.get<double>() > hi) {
      fail(field(key), "a number from " + std::to_string(lo) + " to " + std::to_string(hi),
           v.dump());
    }
    return v.get<double>();
  }

  // Call last: every key of the object must have been asked for.
  void no_others() const {
    for (const auto& [key, value] : j_.items()) {
      if (seen_.count(key) == 0) {
        std::string known;
        for (const auto& k : seen_) known += (known.empty() ? "" : ", ") + k;
        fail(field(key), "no such field (known here: " + known + ")", "'" + key + "'");
      }
    }
  }
  const std::string& source() const { return source_; }

 private:
  const Json& j_;
  std::string path_;
  const std::string& source_;
  std::set<std::string> seen_;
};

// Declares the keys an object may have, so no_others() can list them even
// when the file uses none.
void declare(Fields& f, std::initializer_list<const char*> keys) {
  for (const char* k : keys) f.has(k);
}

}  // namespace

const char* to_string(Scenario::Expect e) {
  switch (e) {
    case Scenario::Expect::kUnspecified:
      return "";
    case Scenario::Expect::kSafe:
      return "safe";
    case Scenario::Expect::kViolation:
      return "violation";
    case Scenario::Expect::kLiveness:
      return "liveness";
  }
  return "";
}

Scenario parse_scenario(std::string_view text, const std::string& source) {
  Json j;
  try {
    j = Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for 1E400
    std::string what = e.what();
    for (char& c : what) c = c == '\n' ? ' ' : c;
    throw ConfigError(source + ": invalid JSON: " + what);
  }
  Scenario s;
  s.source = source;
  RunConfig& c = s.config;
  c.param_field_prefix = source + ": params.";
  c.topology_field_prefix = source + ": redis.";
  c.fault_field_prefix = source + ": faults";

  Fields top(j, "", source);
  declare(top, {"name", "description", "expect", "algorithm", "params", "seed", "duration",
                "workload", "redis", "network", "stuck_after", "faults"});
  if (top.has("name")) s.name = top.string("name");
  if (top.has("description")) s.description = top.string("description");
  if (top.has("expect")) {
    const std::string e = top.string("expect");
    if (e == "safe")
      s.expect = Scenario::Expect::kSafe;
    else if (e == "violation")
      s.expect = Scenario::Expect::kViolation;
    else if (e == "liveness")
      s.expect = Scenario::Expect::kLiveness;
    else
      top.fail("expect", "one of safe, violation, liveness", "'" + e + "'");
  }
  if (!j.contains("algorithm")) top.fail("algorithm", "an algorithm name", "nothing");
  c.algorithm = top.string("algorithm");
  const algorithms::AlgorithmSpec* spec = algorithms::find_algorithm(c.algorithm);
  if (spec == nullptr) {
    top.fail("algorithm", "one of " + algorithms::algorithm_names(), "'" + c.algorithm + "'");
  }
  if (top.has("params")) {
    const Json& p = top.at("params");
    if (!p.is_object()) top.fail("params", "an object of NAME: \"VALUE\"", p.dump());
    for (const auto& [k, v] : p.items()) {
      if (v.is_string())
        c.algorithm_params[k] = v.get<std::string>();
      else if (v.is_number())
        c.algorithm_params[k] = v.dump();
      else
        top.fail("params." + k, "a string or a number", v.dump());
    }
  }
  if (top.has("seed")) c.seed = static_cast<uint64_t>(top.integer("seed", 0, INT64_MAX));
  if (top.has("duration")) c.duration = top.duration("duration");
  if (top.has("stuck_after")) c.stuck_after = top.duration("stuck_after");

  if (top.has("workload")) {
    Fields w(top.at("workload"), "workload.", source);
    declare(w, {"clients", "hold", "retry_pause", "hold_within_validity"});
    if (w.has("clients")) {
      c.workload.clients = static_cast<int>(w.integer("clients", 1, RunConfig::kMaxClients));
    }
    if (w.has("hold")) {
      std::tie(c.workload.hold_min, c.workload.hold_max) =
          parse_duration_range(w.string("hold"), source + ": workload.hold");
    }
    if (w.has("retry_pause")) c.workload.retry_pause = w.duration("retry_pause");
    if (w.has("hold_within_validity")) {
      c.workload.hold_within_validity = w.boolean("hold_within_validity");
    }
    w.no_others();
  }

  if (top.has("redis")) {
    Fields r(top.at("redis"), "redis.", source);
    declare(r, {"masters", "replicas", "replication_lag", "persistence", "rdb_interval", "failover",
                "down_after", "discovery_delay", "timeout"});
    sim::redis::Topology& t = c.redis;
    if (r.has("masters"))
      t.masters = static_cast<int>(r.integer("masters", 1, RunConfig::kMaxRedisMasters));
    if (r.has("replicas")) {
      t.replicas = static_cast<int>(r.integer("replicas", 0, RunConfig::kMaxReplicasPerMaster));
    }
    if (r.has("replication_lag")) t.replication_lag = r.duration("replication_lag");
    if (r.has("persistence")) {
      const std::string p = r.string("persistence");
      const auto mode = sim::redis::persistence_from(p);
      if (!mode)
        r.fail("redis.persistence", "one of none, aof-everysec, aof-always, rdb", "'" + p + "'");
      t.persistence = *mode;
    }
    if (r.has("rdb_interval")) t.rdb_interval = r.duration("rdb_interval");
    if (r.has("failover")) t.failover = r.boolean("failover");
    if (r.has("down_after")) t.down_after = r.duration("down_after");
    if (r.has("discovery_delay")) t.discovery_delay = r.duration("discovery_delay");
    if (r.has("timeout")) t.timeout = r.duration("timeout");
    r.no_others();
  }

  if (top.has("network")) {
    Fields n(top.at("network"), "network.", source);
    declare(n, {"latency_base", "latency_jitter_mean", "loss"});
    if (n.has("latency_base")) c.link.latency_base = n.duration("latency_base");
    if (n.has("latency_jitter_mean"))
      c.link.latency_jitter_mean = n.duration("latency_jitter_mean");
    if (n.has("loss")) c.link.loss = n.number("loss", 0, 1);
    n.no_others();
  }

  if (top.has("faults")) {
    const Json& f = top.at("faults");
    if (!f.is_array()) top.fail("faults", "an array of fault strings", f.dump());
    for (size_t i = 0; i < f.size(); ++i) {
      const std::string field = source + ": faults[" + std::to_string(i) + "]";
      if (!f[i].is_string()) {
        throw ConfigError(field +
                          ": expected a fault string such as 'pause c1 at 5s for 12s', got " +
                          f[i].dump());
      }
      c.faults.events.push_back(faults::parse_fault(f[i].get<std::string>(), field));
    }
  }
  top.no_others();
  validate(c);
  return s;
}

Scenario load_scenario(const std::string& name_or_path) {
  for (const BuiltinScenario& b : builtin_scenario_texts()) {
    if (name_or_path == b.name) return parse_scenario(b.json, "builtin:" + name_or_path);
  }
  std::ifstream in(name_or_path, std::ios::binary);
  if (!in) {
    std::string names;
    for (const BuiltinScenario& b : builtin_scenario_texts()) {
      names += (names.empty() ? "" : ", ") + std::string(b.name);
    }
    throw ConfigError("--scenario: expected a shipped scenario name (" + names +
                      ") or a readable file, got '" + name_or_path + "'");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_scenario(ss.str(), name_or_path);
}

}  // namespace locksim::harness
