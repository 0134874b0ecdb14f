// The ZooKeeper backend's entry: its settings (the scenario's "zookeeper"
// section: servers, tick, session_timeout, sync_limit_ticks, election_delay,
// reconnect_pause; flags --zk-servers ... --zk-reconnect-pause), the checks
// across them, and its deployment (sim/zookeeper/zk_backend.h).
//
// Each value's range is ZkParams's (sim/zookeeper/zk_params.h, where the
// reasons are); the rows check it at parse time, so an error names the field
// as the user wrote it ("--zk-servers", "my.json: zookeeper.servers").
#include "env/parse.h"
#include "harness/backends.h"
#include "harness/setting_rows.h"
#include "sim/zookeeper/zk_backend.h"

namespace locksim::harness {

namespace {

// 1, 3 or 5: a majority of an even ensemble tolerates no more failures than
// the odd one below it, and zero servers is no ensemble.
Setting servers_row() {
  Setting s{"--zk-servers",
            "zookeeper.servers",
            Setting::Kind::kInteger,
            "1|3|5",
            "ZooKeeper ensemble size (odd: 1, 3 or 5)",
            true};
  s.parse = [](RunConfig& c, const std::string& text, const std::string& field) {
    const auto bad = [&] {
      return ConfigError(field + ": expected 1, 3 or 5 (an odd ensemble size), got '" + text + "'");
    };
    int64_t n = 0;
    try {
      n = parse_integer(text, field, 1, 5);
    } catch (const ConfigError&) {
      throw bad();  // "from 1 to 5" would invite a 2 or a 4
    }
    if (n != 1 && n != 3 && n != 5) throw bad();
    c.zookeeper.servers = static_cast<int>(n);
  };
  s.format = [](const RunConfig& c) { return std::to_string(c.zookeeper.servers); };
  return s;
}

// A duration row in ZkParams's range [lo, hi], which its messages say.
template <class Get>
Setting bounded_duration_row(std::string flag, std::string path, std::string help, bool live,
                             Duration lo, Duration hi, Get get) {
  const std::string expected =
      lo == Duration::nanos(1)
          ? "a positive duration up to " + format_duration(hi)
          : "a duration from " + format_duration(lo) + " to " + format_duration(hi);
  return duration_row_in(std::move(flag), std::move(path), std::move(help), live, lo, hi, expected,
                         get);
}

std::vector<Setting> zookeeper_rows() {
  std::vector<Setting> rows;
  rows.push_back(servers_row());
  rows.push_back(bounded_duration_row(
      "--zk-tick", "zookeeper.tick", "ZooKeeper tickTime: sessions are clamped to [2, 20] ticks",
      true, Duration::millis(1), Duration::seconds(60),
      [](auto& c) -> auto& { return c.zookeeper.tick; }));
  rows.push_back(bounded_duration_row(
      "--session-timeout", "zookeeper.session_timeout",
      "ZooKeeper session timeout asked for (the server clamps it to [2, 20] ticks)", true,
      Duration::nanos(1), Duration::seconds(3600),
      [](auto& c) -> auto& { return c.zookeeper.session_timeout; }));
  rows.push_back(int_row(
      "--zk-sync-limit-ticks", "zookeeper.sync_limit_ticks",
      "ZooKeeper syncLimit: ticks without a quorum (or leader) before an election", false, 1, 100,
      [](auto& c) -> auto& { return c.zookeeper.sync_limit_ticks; }));
  rows.push_back(bounded_duration_row(
      "--zk-election-delay", "zookeeper.election_delay",
      "how long a ZooKeeper leader election takes", false, Duration::zero(), Duration::seconds(600),
      [](auto& c) -> auto& { return c.zookeeper.election_delay; }));
  rows.push_back(bounded_duration_row(
      "--zk-reconnect-pause", "zookeeper.reconnect_pause",
      "ZooKeeper client's back-off once every server in its list has failed", false,
      Duration::millis(1), Duration::seconds(10),
      [](auto& c) -> auto& { return c.zookeeper.reconnect_pause; }));
  return rows;
}

// Every field is checked by its row; ZkParams::validate is the backstop for
// a config built in code, named as the user would have written it.
void validate_zookeeper(const RunConfig& c) {
  try {
    c.zookeeper.validate("zookeeper.");
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    const size_t colon = what.find(':');
    const std::string path = what.substr(0, colon);
    if (find_setting_by_path(path) == nullptr) throw;
    throw ConfigError(field_name(c, path) + what.substr(colon));
  }
}

}  // namespace

BackendSpec zookeeper_backend() {
  BackendSpec b;
  b.name = "zookeeper";
  b.settings = zookeeper_rows;
  b.validate = validate_zookeeper;
  b.make = [](sim::World& world, sim::Network& net, const RunConfig& c) {
    return std::unique_ptr<sim::Deployment>(new sim::zookeeper::ZkBackend(world, net, c.zookeeper));
  };
  // What a fault must outlast: the session timeout the servers grant.
  b.lease = [](const RunConfig& c) { return c.zookeeper.negotiate(c.zookeeper.session_timeout); };
  return b;
}

}  // namespace locksim::harness
