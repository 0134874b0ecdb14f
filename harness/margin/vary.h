// --vary PARAM=A..B (issue 23): how a margin moves with one setting. The
// margin is measured at kVaryPoints evenly spaced values of the setting,
// ends included, each point one measure_margin() with everything else kept,
// and set beside the theory at that value (the report draws both).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "harness/margin/margin.h"
#include "harness/run_config.h"

namespace locksim::harness::margin {

// Points per plot: enough to show a line's slope and a bend, few enough that
// a varied table costs five times the cells it varies, not more.
inline constexpr int kVaryPoints = 5;

// The settings --vary takes, in the order errors list them.
inline constexpr const char* kVaryParams = "ttl, drift-factor, session-timeout";

struct Vary {
  std::string param;                // "ttl", "drift-factor", "session-timeout"
  std::vector<std::string> values;  // kVaryPoints values as the settings read them ("5s")
  std::vector<double> xs;           // the same as numbers for the plot: seconds, or the factor
  std::string unit;                 // the x axis: "s", or "" for the factor
};

// Parses "ttl=5s..20s" or "drift-factor=0.01..0.05". Throws ConfigError (one
// line naming --vary and what was expected) for an unknown PARAM, a missing
// '=' or '..', a value without its unit, or an empty range (A >= B).
Vary parse_vary(std::string_view text);

// Whether `algorithm` has the setting: a ttl parameter, a drift-factor
// parameter, or (session-timeout) a ZooKeeper session.
bool has_vary_param(const std::string& algorithm, const std::string& param);

// Whether the setting moves the theory of `kind`: only those are plotted
// (ttl: pause, client-clock, server-clock-step, whose theory is ttl - hold;
// drift-factor: Redlock's drift on a quorum or all; session-timeout: the
// ZooKeeper pause).
bool vary_moves(const std::string& param, Kind kind);

// `config` with the setting at `value` (one of Vary::values).
void apply_vary(RunConfig& config, const std::string& param, const std::string& value);

// For `margin --vary`: throws ConfigError naming --vary when `algorithm`
// lacks the setting or `kind` does not move with it.
void check_vary_applies(const Vary& vary, const std::string& algorithm, Kind kind);

}  // namespace locksim::harness::margin
