#include "harness/setting_rows.h"

#include <charconv>
#include <cmath>

#include "env/assert.h"
#include "faults/fault_schedule.h"

namespace locksim::harness {

namespace {

// The shortest text that reads back to the same double (std::to_chars), so a
// replayed probability is bit-identical.
std::string format_number(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

template <class Get>
Setting probability_row(std::string flag, std::string path, std::string help, Get get) {
  Setting s{std::move(flag), std::move(path), Setting::Kind::kNumber,
            "0..1",          std::move(help), false};
  s.parse = [get](RunConfig& c, const std::string& text, const std::string& field) {
    double v = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    // Written so that NaN fails too.
    if (ec != std::errc() || ptr != text.data() + text.size() || !(v >= 0.0 && v <= 1.0)) {
      throw ConfigError(field + ": expected a probability from 0 to 1, got '" + text + "'");
    }
    get(c) = v;
  };
  s.format = [get](const RunConfig& c) { return format_number(get(c)); };
  return s;
}

}  // namespace

Setting params_row() {
  Setting s{"--param",
            "params",
            Setting::Kind::kParams,
            "NAME=VALUE",
            "algorithm parameter (repeatable; see locksim list)",
            true};
  s.parse = [](RunConfig& c, const std::string& text, const std::string& field) {
    const size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw ConfigError(field + ": expected NAME=VALUE, got '" + text + "'");
    }
    // No parameter's value holds a comma; "ttl=10s,max-attempts=5" is two
    // parameters in one --param, whose ttl would be refused as "10s,max-...".
    const size_t comma = text.find(',', eq);
    if (comma != std::string::npos && text.find('=', comma) != std::string::npos) {
      throw ConfigError(field + ": expected one NAME=VALUE, got '" + text +
                        "' (no value has a comma; give each parameter on its own)");
    }
    // Checked by the algorithm's own spec once the whole config is read.
    c.algorithm_params[text.substr(0, eq)] = text.substr(eq + 1);
    LOCKSIM_ASSERT(c.algorithm_params.count(text.substr(0, eq)) == 1);
  };
  s.items = [](const RunConfig& c) {
    std::vector<std::string> out;
    for (const auto& [name, value] : c.algorithm_params) out.push_back(name + "=" + value);
    return out;
  };
  return s;
}

Setting schedule_row() {
  return choice_row(
      "--schedule", "schedule",
      "which of the fibers woken at one instant runs first: seeded (the seed decides) or fifo",
      false, {"seeded", "fifo"}, [](auto& c) -> auto& { return c.policy; },
      [](const std::string& n) {
        return n == "fifo" ? sim::SchedulePolicy::kFifo : sim::SchedulePolicy::kSeeded;
      },
      [](sim::SchedulePolicy p) { return p == sim::SchedulePolicy::kFifo ? "fifo" : "seeded"; });
}

Setting faults_row() {
  Setting s{"--fault",
            "faults",
            Setting::Kind::kList,
            "'pause c1 at 5s for 12s'",
            "a fault (repeatable; syntax in docs/reference/faults.md)",
            true};
  s.live_help =
      "a fault applied to the real servers, links and clients (repeatable; what each kind does "
      "live, and the few refused: docs/how-to/live-mode.md, Faults on real servers)";
  s.parse = [](RunConfig& c, const std::string& text, const std::string& field) {
    const size_t before = c.faults.events.size();
    // Indexed as every later check names a fault ("--fault[1]: ..."), so
    // of several --fault flags the one that cannot be read is named.
    // (A scenario file's reader indexes its list itself.)
    const bool indexed = !field.empty() && field.back() == ']';
    c.faults.events.push_back(
        faults::parse_fault(text, indexed ? field : field + "[" + std::to_string(before) + "]"));
    LOCKSIM_ASSERT(c.faults.events.size() == before + 1);
  };
  s.items = [](const RunConfig& c) {
    std::vector<std::string> out;
    for (const auto& e : c.faults.events) out.push_back(e.describe());
    return out;
  };
  return s;
}

std::vector<Setting> network_settings() {
  std::vector<Setting> rows;
  rows.push_back(duration_row(
      "--latency-base", "network.latency_base", "one-way latency of every message, before jitter",
      true, DurationRule::kNonNegative, [](auto& c) -> auto& { return c.link.latency_base; }));
  // Live, so a scenario that times a fault by its links' latency faults the
  // same bytes (live/live_backend.h, link_latency).
  rows.back().live_help =
      "on Redis and ZooKeeper, every client-server link carries it through a relay of its own, "
      "in whole ms (up to 1 ms: loopback's own), plus a handshake's round trip per new "
      "connection; refused on MySQL";
  rows.push_back(duration_row(
      "--latency-jitter-mean", "network.latency_jitter_mean",
      "mean of the exponential jitter added to each message", false, DurationRule::kNonNegative,
      [](auto& c) -> auto& { return c.link.latency_jitter_mean; }));
  rows.push_back(probability_row(
      "--loss", "network.loss",
      "probability that a packet is lost and retransmitted (a delay of one RTO, 200 ms doubling)",
      [](auto& c) -> auto& { return c.link.loss_probability; }));
  rows.push_back(duration_row(
      "--retransmission-limit", "network.retransmission_limit",
      "a partition longer than this breaks the connections across it (Linux tcp_retries2=15)",
      false, DurationRule::kPositive, [](auto& c) -> auto& { return c.tcp.retransmission_limit; }));
  return rows;
}

}  // namespace locksim::harness
