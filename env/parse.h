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
  // Always one line of plain text: a newline, carriage return or tab echoed
  // from the input (a JSON key, a duration string) becomes a space, and any
  // other control byte "\xNN", so the rule holds whatever the user typed (a
  // "\u0000" in a file cut the message short at what(); an escape sequence
  // reached the terminal).
  explicit ConfigError(const std::string& what) : std::runtime_error(one_line(what)) {}

 private:
  static std::string one_line(const std::string& s) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(s.size());
    for (const char c : s) {
      const auto byte = static_cast<unsigned char>(c);
      if (c == '\n' || c == '\r' || c == '\t') {
        out += ' ';
      } else if (byte < 0x20 || byte == 0x7f) {
        out += {'\\', 'x', kHex[byte >> 4], kHex[byte & 0xf]};
      } else {
        out += c;
      }
    }
    return out;
  }
};

// "250ns", "100us", "500ms", "10s", "1.5s", "2m", "1h". A bare number is
// rejected: a unit is always required, because "10" meaning seconds to one
// user and milliseconds to another is how TTL bugs are born.
// Throws ConfigError naming `field`. `range`, when given, is what the field
// accepts ("a positive duration up to 7 days"), said instead of the generic
// words for a sign or a size past 10^9 s, so that '-5s', '0s' and '200h'
// get one message from one field (they got three, and two were untrue).
Duration parse_duration(std::string_view text, std::string_view field, std::string_view range = {});

// "1s..3s" (inclusive range) or a single duration "2s" (lo == hi).
std::pair<Duration, Duration> parse_duration_range(std::string_view text, std::string_view field);
// As parse_duration_range, but in either order ("5s..1s" too): for a caller
// that needs LO < HI and says so in its own message, which then covers both
// mistakes (margin's --range and --vary wanted LO < HI but said "LOW <=
// HIGH" of a backwards range).
std::pair<Duration, Duration> parse_duration_ends(std::string_view text, std::string_view field);

// Shortest exact rendering: "10s", "1500ms", "250us".
std::string format_duration(Duration d);

// format_duration, and for two days or more its size in days beside it:
// "31536000s (365 days)", "94608014s (about 1095 days)". A year's deadline
// (MySQL's default ttl) read as a bare count of seconds.
std::string format_long_duration(Duration d);

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
