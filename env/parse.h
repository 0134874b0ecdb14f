// Parsing of the few value syntaxes users type: durations and ranges.
//
// Every failure is a ConfigError whose message is the one line the user sees:
// the field, what was expected, and what was given.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "env/time.h"

namespace locksim {

class ConfigError : public std::runtime_error {
 public:
  // Always one line: a newline or carriage return echoed from the input (a
  // JSON key, a duration string) becomes a space, so the rule holds whatever
  // the user typed.
  explicit ConfigError(std::string what) : std::runtime_error(one_line(std::move(what))) {}

 private:
  static std::string one_line(std::string s) {
    for (char& c : s) c = c == '\n' || c == '\r' ? ' ' : c;
    return s;
  }
};

// "250ns", "100us", "500ms", "10s", "1.5s", "2m", "1h". A bare number is
// rejected: a unit is always required, because "10" meaning seconds to one
// user and milliseconds to another is how TTL bugs are born.
// Throws ConfigError naming `field`.
Duration parse_duration(std::string_view text, std::string_view field);

// "1s..3s" (inclusive range) or a single duration "2s" (lo == hi).
std::pair<Duration, Duration> parse_duration_range(std::string_view text, std::string_view field);

// Shortest exact rendering: "10s", "1500ms", "250us".
std::string format_duration(Duration d);

// Seconds with millisecond precision, from integers only so the text is the
// same on every platform ("12.345s"); truncates, as the rest of locksim does.
std::string format_seconds(int64_t ns);

// Like format_seconds, but a span too short to show as 0.000s is given in
// microseconds ("522us", "1.5us") or, below one, nanoseconds ("300ns"), so a
// tiny overlap never reads as zero nor as a long raw count.
std::string format_span(int64_t ns);

// Whole number in [lo, hi]. Throws ConfigError naming `field`.
int64_t parse_integer(std::string_view text, std::string_view field, int64_t lo, int64_t hi);

}  // namespace locksim
