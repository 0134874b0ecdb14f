#include "harness/margin/vary.h"

#include <cstdio>

#include "algorithms/registry.h"
#include "env/assert.h"
#include "env/parse.h"

namespace locksim::harness::margin {

namespace {

[[noreturn]] void bad(std::string_view text, const std::string& expected) {
  throw ConfigError("--vary: expected " + expected + ", got '" + std::string(text) + "'");
}

// "0.0125": the factor as Redlock's parameter reads it, without noise digits.
std::string factor_text(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", f);
  return buf;
}

double parse_factor(std::string_view part, std::string_view text) {
  try {
    size_t used = 0;
    const double f = std::stod(std::string(part), &used);
    if (used == part.size() && f >= 0.0 && f < 1.0) return f;
  } catch (const std::exception&) {  // std::invalid_argument, std::out_of_range: said below
  }
  bad(text, "drift-factor=A..B with 0 <= A < B < 1 (e.g. drift-factor=0.01..0.05)");
}

void even_durations(Vary& v, std::string_view text, std::string_view range) {
  const auto [lo, hi] = parse_duration_ends(range, "--vary");  // ordered below, A < B
  if (lo <= Duration::zero() || lo >= hi) {
    bad(text, v.param + "=A..B with 0 < A < B (e.g. " + v.param + "=5s..20s)");
  }
  for (int i = 0; i < kVaryPoints; ++i) {
    // Whole milliseconds, ends exact: the values a replay line reads back.
    const int64_t ms = (lo.ns + (hi.ns - lo.ns) / (kVaryPoints - 1) * i) / 1'000'000;
    const Duration d = i == kVaryPoints - 1 ? hi : Duration::millis(ms);
    v.values.push_back(format_duration(d));
    v.xs.push_back(static_cast<double>(d.ns) / 1e9);
  }
  v.unit = "s";
}

void even_factors(Vary& v, std::string_view text, std::string_view range) {
  const size_t dots = range.find("..");
  if (dots == std::string_view::npos) bad(text, "drift-factor=A..B");
  const double lo = parse_factor(range.substr(0, dots), text);
  const double hi = parse_factor(range.substr(dots + 2), text);
  if (lo >= hi) bad(text, "drift-factor=A..B with A < B");
  for (int i = 0; i < kVaryPoints; ++i) {
    const double f = lo + (hi - lo) * i / (kVaryPoints - 1);
    v.values.push_back(factor_text(f));
    v.xs.push_back(std::stod(v.values.back()));
  }
}

}  // namespace

Vary parse_vary(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos)
    bad(text, "PARAM=A..B (PARAM one of " + std::string(kVaryParams) + ")");
  Vary v;
  v.param = std::string(text.substr(0, eq));
  const std::string_view range = text.substr(eq + 1);
  if (v.param == "ttl" || v.param == "session-timeout") {
    even_durations(v, text, range);
  } else if (v.param == "drift-factor") {
    even_factors(v, text, range);
  } else if (v.param == "replication-lag") {
    // Said apart from an unknown setting: a user reading the list
    // expects it, and the answer is where to look instead.
    throw ConfigError(
        "--vary: replication-lag is the size failover-lag searches (its margin is the largest "
        "lag a grant survives: locksim margin --fault failover-lag); no kind's margin moves "
        "with it (expected one of " +
        std::string(kVaryParams) + ")");
  } else {
    throw ConfigError("--vary: unknown setting '" + v.param + "' (expected one of " +
                      std::string(kVaryParams) + ")");
  }
  LOCKSIM_ASSERT(static_cast<int>(v.values.size()) == kVaryPoints);
  LOCKSIM_ASSERT(v.xs.size() == v.values.size());
  return v;
}

bool has_vary_param(const std::string& algorithm, const std::string& param) {
  const algorithms::AlgorithmSpec* spec = algorithms::find_algorithm(algorithm);
  if (spec == nullptr) return false;
  if (param == "session-timeout") return spec->backend == "zookeeper";
  for (const algorithms::ParamInfo& p : spec->params) {
    if (p.name == param) return true;
  }
  return false;
}

bool vary_moves(const std::string& param, Kind kind) {
  if (param == "drift-factor") {
    return kind == Kind::kServerDrift || kind == Kind::kServerDriftAll ||
           kind == Kind::kClientDrift;
  }
  if (param == "session-timeout") return kind == Kind::kPause;
  return kind == Kind::kPause || kind == Kind::kClientClock || kind == Kind::kServerClockStep ||
         kind == Kind::kServerClockStepAll;
}

void apply_vary(RunConfig& config, const std::string& param, const std::string& value) {
  if (param == "session-timeout") {
    config.zookeeper.session_timeout = parse_duration(value, "--vary");
  } else {
    config.algorithm_params[param] = value;
  }
}

void check_vary_applies(const Vary& vary, const std::string& algorithm, Kind kind) {
  if (!has_vary_param(algorithm, vary.param)) {
    throw ConfigError("--vary: " + algorithm + " has no setting '" + vary.param +
                      "' (expected one it has, of " + std::string(kVaryParams) + ")");
  }
  if (!vary_moves(vary.param, kind)) {
    throw ConfigError("--vary: " + vary.param + " does not move the " + to_string(kind) +
                      " margin's theory (expected a kind it moves)");
  }
}

}  // namespace locksim::harness::margin
