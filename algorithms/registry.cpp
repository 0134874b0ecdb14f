#include "algorithms/registry.h"

#include "algorithms/getset_timestamp.h"
#include "algorithms/mysql_lock.h"
#include "algorithms/naive_setnx.h"
#include "algorithms/redisson_fair_lock.h"
#include "algorithms/redisson_lock.h"
#include "algorithms/redlock.h"
#include "algorithms/set_nx_lua.h"
#include "algorithms/set_nx_lua_fenced.h"
#include "algorithms/zk_lock.h"
#include "env/assert.h"

namespace locksim::algorithms {

namespace {

std::deque<AlgorithmSpec>& registry() {
  // Each entry is declared beside its algorithm. The order is the one
  // `locksim list` and algorithm_names() show.
  static std::deque<AlgorithmSpec> specs = [] {
    std::deque<AlgorithmSpec> v = {
        set_nx_lua_spec(),       set_nx_lua_fenced_spec(), naive_setnx_spec(),
        getset_timestamp_spec(), redlock_spec(),           redisson_spec(),
        redisson_leased_spec(),  redisson_fenced_spec(),   redisson_fair_spec(),
        mysql_v1_spec(),         mysql_center_spec(),      mysql_segmented_spec(),
    };
    for (AlgorithmSpec& zk : zk_algorithm_specs()) v.push_back(std::move(zk));
    return v;
  }();
  return specs;
}

std::function<void(const std::string&)>& script_loader() {
  static std::function<void(const std::string&)> loader;
  return loader;
}

const AlgorithmSpec* find_listed(std::string_view name) {
  for (const AlgorithmSpec& s : registry()) {
    if (s.name == name) {
      LOCKSIM_ASSERT_MSG(s.make != nullptr, "every entry can build its algorithm");
      return &s;
    }
  }
  return nullptr;
}

}  // namespace

void set_script_loader(std::function<void(const std::string& name)> loader) {
  script_loader() = std::move(loader);
}

const std::deque<AlgorithmSpec>& all_algorithms() {
  return registry();
}

void register_algorithm(AlgorithmSpec spec) {
  LOCKSIM_ASSERT_MSG(!spec.name.empty() && spec.make != nullptr && !spec.backend.empty(),
                     "a registered algorithm has a name, a make and a backend");
  LOCKSIM_ASSERT_MSG(find_listed(spec.name) == nullptr, "algorithm names are unique");
  registry().push_back(std::move(spec));
}

const AlgorithmSpec* find_algorithm(std::string_view name) {
  if (const AlgorithmSpec* listed = find_listed(name)) return listed;
  if (name.rfind("script:", 0) != 0 || !script_loader()) return nullptr;
  script_loader()(std::string(name));  // registers it, or throws ConfigError
  return find_listed(name);
}

std::string algorithm_names() {
  std::string out;
  for (const AlgorithmSpec& s : all_algorithms()) out += (out.empty() ? "" : ", ") + s.name;
  return out;
}

}  // namespace locksim::algorithms
