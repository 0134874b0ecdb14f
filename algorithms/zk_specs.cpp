// The registry entries of the three ZooKeeper lock variants (zk_lock.h).
#include "algorithms/param_reader.h"
#include "algorithms/zk_lock.h"
#include "env/parse.h"

namespace locksim::algorithms {

namespace {

const std::vector<ParamInfo>& zk_params() {
  static const std::vector<ParamInfo> params = {
      {"wait", "10s", "how long one acquire waits for the lock before deleting its node"},
      {"retries", "5",
       "retries of an operation after CONNECTIONLOSS, and of an attempt "
       "after the session was lost"},
  };
  return params;
}

std::unique_ptr<LockAlgorithm> make_zk(ZkLock::Variant variant, const ParamValues& values,
                                       const std::string& prefix) {
  for (const auto& [name, value] : values) {
    if (name != "wait" && name != "retries") {
      throw ConfigError(param_field(prefix, name) +  // --ttl as typed, not --param ttl
                        ": not a parameter of the ZooKeeper locks (they have: "
                        "wait, retries)");
    }
  }
  auto text = [&values](const std::string& name, const std::string& fallback) {
    const auto it = values.find(name);
    return it == values.end() ? fallback : it->second;
  };
  ZkLock::Params p;
  p.variant = variant;
  const std::string wait = text("wait", "10s");
  p.wait = parse_duration(wait, prefix + "wait");
  if (p.wait <= Duration::zero()) {
    throw ConfigError(prefix + "wait: expected a positive duration, got '" + wait + "'");
  }
  p.retries_max =
      static_cast<int>(parse_integer(text("retries", "5"), prefix + "retries", 0, 1000));
  return std::make_unique<ZkLock>(p);
}

AlgorithmSpec spec(const char* name, const char* summary, ZkLock::Variant variant) {
  AlgorithmSpec s;
  s.name = name;
  s.summary = summary;
  s.params = zk_params();
  s.backend = "zookeeper";
  s.make = [variant](const ParamValues& values, const std::string& prefix) {
    return make_zk(variant, values, prefix);
  };
  return s;
}

}  // namespace

std::vector<AlgorithmSpec> zk_algorithm_specs() {
  return {
      spec("zk-recipe",
           "ZooKeeper's lock recipe, bare: ephemeral-sequential node, watch the next-lower one; "
           "ignores connection state, creates again after a lost reply",
           ZkLock::Variant::kRecipe),
      spec("zk-curator",
           "the recipe as Curator's InterProcessMutex: protected mode, and a holder stops on "
           "SUSPENDED; fencing token = czxid",
           ZkLock::Variant::kCurator),
      spec("zk-herd",
           "Curator's rules, but every waiter watches the lock's children (the herd effect)",
           ZkLock::Variant::kHerd),
  };
}

}  // namespace locksim::algorithms
