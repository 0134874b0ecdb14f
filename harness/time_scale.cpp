#include "harness/time_scale.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <string>

#include "algorithms/registry.h"
#include "env/assert.h"
#include "env/parse.h"
#include "harness/profile_deployment.h"
#include "harness/setting_needs.h"
#include "harness/settings.h"

namespace locksim::harness {

namespace {

// Whole milliseconds, at least 1 ms: what PX, a TTL or a fault time take.
// A duration that was not whole milliseconds to begin with (the network's
// 200us latency) is scaled in whole microseconds, at least 1 us: rounded to
// 1 ms it grew 5 to 10 times at any factor, 2 or 0.5 alike.
Duration scaled(Duration d, double factor) {
  if (d == Duration::zero()) return d;
  const bool sub_ms = d.ns % Duration::millis(1).ns != 0;
  const Duration unit = sub_ms ? Duration::micros(1) : Duration::millis(1);
  const double units =
      std::round(static_cast<double>(d.ns) * factor / static_cast<double>(unit.ns));
  const int64_t whole = std::max<int64_t>(1, static_cast<int64_t>(std::abs(units)));
  return Duration{(d < Duration::zero() ? -whole : whole) * unit.ns};
}

// The scaled text of a duration or a duration range; nullopt for anything
// else ("none", a number, a name).
std::optional<std::string> scaled_text(const std::string& text, double factor) {
  try {
    if (text.find("..") != std::string::npos) {
      const auto [lo, hi] = parse_duration_range(text, "");
      return format_duration(scaled(lo, factor)) + ".." + format_duration(scaled(hi, factor));
    }
    return format_duration(scaled(parse_duration(text, ""), factor));
  } catch (const ConfigError&) {
    return std::nullopt;
  }
}

void scale_settings(RunConfig& config, double factor) {
  for (const Setting& s : all_settings()) {
    if (s.kind != Setting::Kind::kText || !s.format || !s.parse) continue;
    // Another backend's settings are left alone: the run does not read them,
    // and scaled they could leave their range (a ZooKeeper tick above 60 s at
    // --time-scale 31 refused every Redis run). So is a setting whose parent
    // is off (harness/setting_needs.h): scaled, it would show in the replay
    // command as given, which validation refuses for a setting nothing reads.
    if (belongs_to_other_backend(s, config) || !run_reads(config, s)) continue;
    const std::string text = s.format(config);
    const std::optional<std::string> next = scaled_text(text, factor);
    if (next && *next != text) s.parse(config, *next, field_name(config, s) + " (time-scaled)");
  }
}

void scale_params(RunConfig& config, double factor) {
  const algorithms::AlgorithmSpec* spec = algorithms::find_algorithm(config.algorithm);
  if (spec == nullptr) return;  // prepare_run names the unknown algorithm
  for (const auto& p : spec->params) {
    const auto given = config.algorithm_params.find(p.name);
    const std::string text =
        given != config.algorithm_params.end() ? given->second : p.default_value;
    const std::optional<std::string> next = scaled_text(text, factor);
    if (next && *next != text) config.algorithm_params[p.name] = *next;
  }
}

void scale_faults(RunConfig& config, double factor) {
  for (faults::FaultEvent& e : config.faults.events) {
    e.at = scaled(e.at, factor);
    e.duration = scaled(e.duration, factor);
    e.jump = scaled(e.jump, factor);
    e.delay = scaled(e.delay, factor);
    if (e.after_grant) e.after_grant = scaled(*e.after_grant, factor);
  }
}

}  // namespace

double parse_time_scale(const std::string& text, const std::string& field) {
  double f = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), f);
  // Written so that NaN fails too.
  if (error != std::errc() || end != text.data() + text.size() ||
      !(f >= kTimeScaleMin && f <= kTimeScaleMax)) {
    throw ConfigError(field + ": expected a factor from 0.01 to 100, such as 0.1, got '" + text +
                      "'");
  }
  return f;
}

void scale_time(RunConfig& config, double factor) {
  LOCKSIM_ASSERT(factor >= kTimeScaleMin && factor <= kTimeScaleMax);
  if (factor == 1.0) return;
  // What the user gave, against the fault profile, in the units they gave
  // it: the profile's draws (a lag, a client timeout, the monitor's 1 s and
  // 200 ms) do not scale, so after scaling the two would not compare.
  validate_profile_keeps_given(config);
  config.profile_may_replace_given = true;
  const uint64_t seed = config.seed;
  scale_settings(config, factor);
  scale_params(config, factor);
  scale_faults(config, factor);
  LOCKSIM_ASSERT(config.seed == seed);  // only durations move
}

}  // namespace locksim::harness
