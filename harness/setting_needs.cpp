#include "harness/setting_needs.h"

#include <string_view>

#include "env/assert.h"
#include "env/parse.h"
#include "harness/profile_deployment.h"

namespace locksim::harness {

namespace {

// One pair of harness/setting_needs.h: `path` is read only when `parent_on`.
struct Need {
  std::string_view path;
  std::string_view parent;
  // The parent's value the run needs, as a message says it ("rdb", "1 or
  // more"); "" for a flag, which needs to be on.
  std::string_view wanted;
  // A profile with failover deploys the parent (a replica, the failover).
  bool failover_profile_counts;
  bool (*parent_on)(const RunConfig& config);
};

constexpr Need kNeeds[] = {
    {"resource.items", "resource.workload", "inventory", false,
     [](const RunConfig& c) { return c.workload.store.workload == Workload::kInventory; }},
    {"redis.replication_lag", "redis.replicas", "1 or more", true,
     [](const RunConfig& c) { return c.redis.replicas >= 1; }},
    {"redis.rdb_interval", "redis.persistence", "rdb", false,
     [](const RunConfig& c) { return c.redis.persistence == sim::redis::Persistence::kRdb; }},
    {"redis.down_after", "redis.failover", "", true,
     [](const RunConfig& c) { return c.redis.failover; }},
    {"redis.discovery_delay", "redis.failover", "", true,
     [](const RunConfig& c) { return c.redis.failover; }},
    {"mysql.replication_lag", "mysql.replicas", "1 or more", true,
     [](const RunConfig& c) { return c.mysql.replicas >= 1; }},
    {"mysql.semi_sync_timeout", "mysql.semi_sync", "", false,
     [](const RunConfig& c) { return c.mysql.semi_sync; }},
    {"mysql.down_after", "mysql.failover", "", true,
     [](const RunConfig& c) { return c.mysql.failover; }},
    {"mysql.discovery_delay", "mysql.failover", "", true,
     [](const RunConfig& c) { return c.mysql.failover; }},
};

const Need* need_of(const Setting& s) {
  for (const Need& n : kNeeds) {
    if (n.path == s.json_path) return &n;
  }
  return nullptr;
}

// "--rdb-interval: only read with --persistence rdb (it is none); give that
// too, or leave --rdb-interval out".
std::string unread_message(const RunConfig& c, const Setting& s, const Need& n) {
  const Setting* row = find_setting_by_path(n.parent);
  LOCKSIM_ASSERT_MSG(row != nullptr, "a pair's parent is a row of the table");
  const Setting& parent = *row;
  const bool flag = parent.kind == Setting::Kind::kFlag;
  std::string wanted = short_field_name(c, n.parent);
  if (!n.wanted.empty()) wanted += " " + std::string(n.wanted);
  if (flag && !c.source.empty()) wanted += " true";  // a file says a flag's value
  const std::string now = flag && c.source.empty() ? "off" : parent.format(c);
  std::string message = field_name(c, s) + ": only read with " + wanted;
  const bool or_profile = n.failover_profile_counts && c.profiles_offered;
  if (or_profile) message += ", or a " + short_field_name(c, "profile") + " with failover";
  message += " (it is " + now + "); give " + std::string(or_profile ? "one of them" : "that too") +
             ", or leave " + short_field_name(c, s.json_path) + " out";
  return message;
}

}  // namespace

bool run_reads(const RunConfig& config, const Setting& setting) {
  const Need* n = need_of(setting);
  if (n == nullptr || belongs_to_other_backend(setting, config)) return true;
  return n->parent_on(config) || (n->failover_profile_counts && profile_deploys_failover(config));
}

void validate_given_are_read(const RunConfig& config) {
  for (const Setting& s : all_settings()) {
    if (!asks_for(config, s) || run_reads(config, s)) continue;
    const Need* n = need_of(s);
    LOCKSIM_ASSERT_MSG(n != nullptr, "only a setting of the pairs goes unread");
    throw ConfigError(unread_message(config, s, *n));
  }
}

}  // namespace locksim::harness
