#include "env/parse.h"

#include <cctype>
#include <charconv>
#include <cstdint>
#include <string>

namespace locksim {

namespace {

[[noreturn]] void fail(std::string_view field, std::string_view expected, std::string_view got) {
  throw ConfigError(std::string(field) + ": expected " + std::string(expected) + ", got '" +
                    std::string(got) + "'");
}

constexpr std::string_view kDurationHelp = "a duration with a unit, such as 500ms, 10s or 2m";

}  // namespace

Duration parse_duration(std::string_view text, std::string_view field, std::string_view range) {
  const std::string_view too_large = range.empty() ? "a duration below 10^9 seconds" : range;
  // The unit is there; the sign is what is wrong (it said "expected a
  // duration with a unit" of '-1s').
  if (!text.empty() && text[0] == '-') {
    fail(field, range.empty() ? "a duration of zero or more, without a sign" : range, text);
  }
  size_t i = 0;
  int64_t whole = 0;
  int64_t frac = 0;
  int64_t frac_scale = 1;
  bool finer = false;  // a nonzero decimal past the ninth, which no unit keeps
  bool digits = false;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    if (whole > INT64_MAX / 100) fail(field, too_large, text);
    whole = whole * 10 + (text[i] - '0');
    digits = true;
    ++i;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (frac_scale < 1'000'000'000) {
        frac = frac * 10 + (text[i] - '0');
        frac_scale *= 10;
      } else if (text[i] != '0') {
        finer = true;
      }
      digits = true;
      ++i;
    }
  }
  if (!digits) fail(field, kDurationHelp, text);
  const std::string_view unit = text.substr(i);
  int64_t unit_ns = 0;
  if (unit == "ns")
    unit_ns = 1;
  else if (unit == "us")
    unit_ns = 1'000;
  else if (unit == "ms")
    unit_ns = 1'000'000;
  else if (unit == "s")
    unit_ns = 1'000'000'000;
  else if (unit == "m")
    unit_ns = 60'000'000'000;
  else if (unit == "h")
    unit_ns = 3'600'000'000'000;
  else
    fail(field, kDurationHelp, text);
  if (whole > 1'000'000'000LL * 1'000'000'000LL / unit_ns) fail(field, too_large, text);
  // 1.5ns ran, and replayed, as 1ns: virtual time counts whole nanoseconds.
  if (finer || static_cast<Int128>(frac) * unit_ns % frac_scale != 0) {
    fail(field, "a duration in whole nanoseconds (virtual time's unit)", text);
  }
  const Int128 ns =
      static_cast<Int128>(whole) * unit_ns + static_cast<Int128>(frac) * unit_ns / frac_scale;
  return Duration{static_cast<int64_t>(ns)};
}

std::pair<Duration, Duration> parse_duration_ends(std::string_view text, std::string_view field) {
  const size_t dots = text.find("..");
  if (dots == std::string_view::npos) {
    const Duration d = parse_duration(text, field);
    return {d, d};
  }
  return {parse_duration(text.substr(0, dots), field),
          parse_duration(text.substr(dots + 2), field)};
}

std::pair<Duration, Duration> parse_duration_range(std::string_view text, std::string_view field) {
  const auto [lo, hi] = parse_duration_ends(text, field);
  if (hi < lo) fail(field, "a range LOW..HIGH with LOW <= HIGH, such as 1s..3s", text);
  return {lo, hi};
}

std::string format_duration(Duration d) {
  const int64_t ns = d.ns;
  if (ns == 0) return "0s";
  struct Unit {
    int64_t ns;
    const char* name;
  };
  static constexpr Unit kUnits[] = {
      {3'600'000'000'000, "h"}, {60'000'000'000, "m"}, {1'000'000'000, "s"},
      {1'000'000, "ms"},        {1'000, "us"},         {1, "ns"}};
  for (const Unit& u : kUnits) {
    if (ns % u.ns == 0) return std::to_string(ns / u.ns) + u.name;
  }
  return std::to_string(ns) + "ns";
}

std::string format_long_duration(Duration d) {
  constexpr int64_t kDayNs = int64_t{24} * 3'600'000'000'000;
  const std::string exact = format_duration(d);
  if (d.ns < 2 * kDayNs) return exact;
  const int64_t days = d.ns / kDayNs;
  return exact + " (" + (d.ns % kDayNs == 0 ? "" : "about ") + std::to_string(days) + " days)";
}

std::string format_seconds(int64_t ns) {
  const bool negative = ns < 0;
  const uint64_t mag = negative ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  const uint64_t ms = (mag % 1000000000u) / 1000000u;
  std::string frac = std::to_string(ms);
  frac.insert(0, 3 - frac.size(), '0');
  // Appended in order, not `"-" + std::string`: gcc 12's -O3 warns falsely
  // (-Wrestrict) on inserting a literal at the front.
  std::string out = negative ? "-" : "";
  out += std::to_string(mag / 1000000000u);
  out += '.';
  out += frac;
  out += 's';
  return out;
}

std::string format_span(int64_t ns) {
  if (ns <= -1000000 || ns >= 1000000) return format_seconds(ns);
  if (ns > -1000 && ns < 1000) return std::to_string(ns) + "ns";
  // Microseconds, as many decimals as it needs: "522us", not "522000ns".
  const bool negative = ns < 0;
  const int64_t mag = negative ? -ns : ns;
  std::string frac = std::to_string(mag % 1000);
  frac.insert(0, 3 - frac.size(), '0');
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  std::string out = negative ? "-" : "";
  out += std::to_string(mag / 1000);
  if (!frac.empty()) {
    out += '.';
    out += frac;
  }
  out += "us";
  return out;
}

int64_t parse_integer(std::string_view text, std::string_view field, int64_t lo, int64_t hi) {
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  const std::string expected =
      "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  if (ec != std::errc() || ptr != text.data() + text.size() || v < lo || v > hi) {
    fail(field, expected, text);
  }
  return v;
}

}  // namespace locksim
