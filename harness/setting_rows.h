// Building blocks for rows of the settings table (harness/settings.h): one
// factory per kind of value, so a row is declared in one statement with its
// flag, JSON path, help, range and where it lives in RunConfig.
//
// `get` is a generic lambda `[](auto& c) -> auto& { return c.field; }`: it
// serves both the parser (non-const config) and the formatter (const).
#pragma once

#include <string>
#include <vector>

#include "env/parse.h"
#include "harness/settings.h"
#include "sim/connection.h"

namespace locksim::harness {

enum class DurationRule { kPositive, kNonNegative };

// A duration in [lo, hi]; `expected` says the range in a message ("a
// duration from 1ms to 60s"), the one message for every value outside it:
// a sign, zero, or past 10^9 s.
template <class Get>
Setting duration_row_in(std::string flag, std::string path, std::string help, bool live,
                        Duration lo, Duration hi, std::string expected, Get get) {
  Setting s{std::move(flag), std::move(path), Setting::Kind::kText,
            "DURATION",      std::move(help), live};
  s.parse = [lo, hi, expected, get](RunConfig& c, const std::string& text,
                                    const std::string& field) {
    const Duration d = parse_duration(text, field, expected);
    if (d < lo || d > hi)
      throw ConfigError(field + ": expected " + expected + ", got '" + text + "'");
    get(c) = d;
  };
  s.format = [get](const RunConfig& c) { return format_duration(get(c)); };
  return s;
}

// A duration up to RunConfig::kDurationMax (7 days), positive or not negative.
template <class Get>
Setting duration_row(std::string flag, std::string path, std::string help, bool live,
                     DurationRule rule, Get get) {
  const bool positive = rule == DurationRule::kPositive;
  return duration_row_in(
      std::move(flag), std::move(path), std::move(help), live,
      positive ? Duration::nanos(1) : Duration::zero(), RunConfig::kDurationMax,
      std::string("a ") + (positive ? "positive" : "non-negative") + " duration up to 7 days", get);
}

// A client timeout in words: "none" (sim::kNoTimeout: wait as long as the
// connection lives) or its duration.
inline std::string timeout_text(Duration timeout) {
  return timeout == sim::kNoTimeout ? "none" : format_duration(timeout);
}

// A client timeout: "none" (sim::kNoTimeout: wait as long as the connection
// lives) or a positive duration up to 7 days.
template <class Get>
Setting timeout_row(std::string flag, std::string path, std::string help, bool live, Get get) {
  Setting s{std::move(flag), std::move(path), Setting::Kind::kText,
            "none|DURATION", std::move(help), live};
  s.parse = [get](RunConfig& c, const std::string& text, const std::string& field) {
    if (text == "none") {
      get(c) = sim::kNoTimeout;
      return;
    }
    const auto bad = [&] {
      return ConfigError(field + ": expected none or a positive duration up to 7 days, got '" +
                         text + "'");
    };
    Duration d;
    try {
      d = parse_duration(text, field);
    } catch (const ConfigError&) {
      throw bad();  // "none" is one of its values: the generic words would leave it out
    }
    if (d <= Duration::zero() || d > RunConfig::kDurationMax) throw bad();
    get(c) = d;
  };
  s.format = [get](const RunConfig& c) { return timeout_text(get(c)); };
  return s;
}

// A whole number in [lo, hi], stored in whatever integer type `get` returns.
template <class Get>
Setting int_row(std::string flag, std::string path, std::string help, bool live, int64_t lo,
                int64_t hi, Get get) {
  Setting s{std::move(flag),         std::move(path),
            Setting::Kind::kInteger, std::to_string(lo) + ".." + std::to_string(hi),
            std::move(help),         live};
  s.parse = [lo, hi, get](RunConfig& c, const std::string& text, const std::string& field) {
    auto& target = get(c);
    target =
        static_cast<std::remove_reference_t<decltype(target)>>(parse_integer(text, field, lo, hi));
  };
  s.format = [get](const RunConfig& c) { return std::to_string(get(c)); };
  return s;
}

template <class Get>
Setting flag_row(std::string flag, std::string path, std::string help, Get get) {
  Setting s{std::move(flag), std::move(path), Setting::Kind::kFlag, "", std::move(help), false};
  s.parse = [get](RunConfig& c, const std::string& text, const std::string& field) {
    if (text != "true" && text != "false") {
      throw ConfigError(field + ": expected true or false, got '" + text + "'");
    }
    get(c) = text == "true";
  };
  s.format = [get](const RunConfig& c) { return std::string(get(c) ? "true" : "false"); };
  return s;
}

// LO..HI (or one duration for both) into two fields.
template <class GetLo, class GetHi>
Setting range_row(std::string flag, std::string path, std::string help, bool live, GetLo lo,
                  GetHi hi) {
  Setting s{std::move(flag), std::move(path), Setting::Kind::kText,
            "LO..HI",        std::move(help), live};
  s.parse = [lo, hi](RunConfig& c, const std::string& text, const std::string& field) {
    std::tie(lo(c), hi(c)) = parse_duration_range(text, field);
    if (lo(c) < Duration::zero() || hi(c) > RunConfig::kDurationMax) {
      throw ConfigError(field +
                        ": expected a range LOW..HIGH with 0 <= LOW <= HIGH <= 7 days, got '" +
                        text + "'");
    }
  };
  s.format = [lo, hi](const RunConfig& c) {
    return format_duration(lo(c)) + ".." + format_duration(hi(c));
  };
  return s;
}

// One of `names`; `to` and `from` convert between the name and the value.
template <class Get, class To, class From>
Setting choice_row(std::string flag, std::string path, std::string help, bool live,
                   std::vector<std::string> names, Get get, To to_value, From to_name) {
  std::string hint;
  for (const auto& n : names) hint += (hint.empty() ? "" : "|") + n;
  Setting s{std::move(flag), std::move(path), Setting::Kind::kText, hint, std::move(help), live};
  s.parse = [names, hint, get, to_value](RunConfig& c, const std::string& text,
                                         const std::string& field) {
    for (const auto& n : names) {
      if (n == text) {
        get(c) = to_value(text);
        return;
      }
    }
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw ConfigError(field + ": expected one of " + list + ", got '" + text + "'");
  };
  s.format = [get, to_name](const RunConfig& c) { return std::string(to_name(get(c))); };
  return s;
}

// Rows without a backend: --param, --schedule, the network, --fault.
Setting params_row();
Setting schedule_row();
Setting faults_row();
std::vector<Setting> network_settings();
// The guarded resource's rows: --workload, --fencing, --items
// (harness/resource_settings.cpp).
std::vector<Setting> resource_settings();

}  // namespace locksim::harness
