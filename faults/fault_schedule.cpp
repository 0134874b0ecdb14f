#include "faults/fault_schedule.h"

#include <sstream>

#include "env/parse.h"

namespace locksim::faults {

const char* to_string(FaultKind k) {
  switch (k) {
    case FaultKind::kPause:
      return "pause";
    case FaultKind::kSetDrift:
      return "drift";
    case FaultKind::kJumpClock:
      return "jump";
    case FaultKind::kCrash:
      return "crash";
    case FaultKind::kPartition:
      return "partition";
    case FaultKind::kHeal:
      return "heal";
  }
  return "?";
}

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t pos = s.find(sep, start);
    out.emplace_back(s.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) return out;
    start = pos + 1;
  }
}

std::string signed_duration(Duration d) {
  return (d < Duration::zero() ? "-" : "+") + format_duration(d < Duration::zero() ? -d : d);
}

}  // namespace

std::string FaultEvent::describe() const {
  std::string out;
  switch (kind) {
    case FaultKind::kPause:
      return "pause " + node + " at " + format_duration(at) + " for " + format_duration(duration);
    case FaultKind::kSetDrift:
      return "drift " + node + " at " + format_duration(at) + " " + (drift_ppm >= 0 ? "+" : "") +
             std::to_string(drift_ppm) + "ppm";
    case FaultKind::kJumpClock:
      return "jump " + node + " at " + format_duration(at) + " " + signed_duration(jump);
    case FaultKind::kCrash:
      out = "crash " + node + " at " + format_duration(at);
      if (duration > Duration::zero()) out += " for " + format_duration(duration);
      return out;
    case FaultKind::kPartition:
      out = "partition " + join(side_a) + "|" + join(side_b) + " at " + format_duration(at);
      if (duration > Duration::zero()) out += " for " + format_duration(duration);
      return out;
    case FaultKind::kHeal:
      return "heal at " + format_duration(at);
  }
  return "?";
}

std::vector<std::string> FaultEvent::value() const {
  switch (kind) {
    case FaultKind::kPause:
      return {node, format_duration(duration)};
    case FaultKind::kSetDrift:
      return {node, (drift_ppm >= 0 ? "+" : "") + std::to_string(drift_ppm) + "ppm"};
    case FaultKind::kJumpClock:
      return {node, signed_duration(jump)};
    case FaultKind::kCrash:
      if (duration > Duration::zero()) return {node, format_duration(duration)};
      return {node};
    case FaultKind::kPartition:
      if (duration > Duration::zero()) {
        return {join(side_a), join(side_b), format_duration(duration)};
      }
      return {join(side_a), join(side_b)};
    case FaultKind::kHeal:
      return {};
  }
  return {};
}

FaultEvent parse_fault(std::string_view text, std::string_view field) {
  std::istringstream in{std::string(text)};
  std::vector<std::string> w;
  for (std::string word; in >> word && w.size() < 16;) w.push_back(word);
  const std::string f(field);
  auto bad = [&](const std::string& expected) -> ConfigError {
    return ConfigError(f + ": expected " + expected + ", got '" + std::string(text) + "'");
  };
  if (w.empty()) throw bad("a fault such as 'pause c1 at 5s for 12s'");
  FaultEvent e;
  const std::string& verb = w[0];
  if (verb == "heal") {
    if (w.size() != 3 || w[1] != "at") throw bad("'heal at T'");
    e.kind = FaultKind::kHeal;
    e.at = parse_duration(w[2], f);
    return e;
  }
  if (w.size() < 4 || w[2] != "at") {
    throw bad("'pause|drift|jump|crash|partition NODE at T ...' or 'heal at T'");
  }
  e.at = parse_duration(w[3], f);
  if (verb == "pause") {
    if (w.size() != 6 || w[4] != "for") throw bad("'pause NODE at T for D'");
    e.kind = FaultKind::kPause;
    e.node = w[1];
    e.duration = parse_duration(w[5], f);
  } else if (verb == "drift") {
    if (w.size() != 5 || w[4].size() < 4 || w[4].substr(w[4].size() - 3) != "ppm") {
      throw bad("'drift NODE at T PPMppm' such as 'drift c2 at 0s +50000ppm'");
    }
    e.kind = FaultKind::kSetDrift;
    e.node = w[1];
    std::string n = w[4].substr(0, w[4].size() - 3);
    if (!n.empty() && n[0] == '+') n = n.substr(1);
    e.drift_ppm = parse_integer(n, f, -999'999, 999'999);
  } else if (verb == "jump") {
    if (w.size() != 5) throw bad("'jump NODE at T +D' such as 'jump redis-1 at 5s +20s'");
    e.kind = FaultKind::kJumpClock;
    e.node = w[1];
    std::string d = w[4];
    const bool back = !d.empty() && d[0] == '-';
    if (!d.empty() && (d[0] == '+' || d[0] == '-')) d = d.substr(1);
    e.jump = parse_duration(d, f);
    if (back) e.jump = -e.jump;
  } else if (verb == "crash" || verb == "partition") {
    if (w.size() != 4 && !(w.size() == 6 && w[4] == "for")) {
      throw bad("'" + verb + " " + (verb == "crash" ? "NODE" : "A,B|C,D") + " at T [for D]'");
    }
    if (w.size() == 6) e.duration = parse_duration(w[5], f);
    if (verb == "crash") {
      e.kind = FaultKind::kCrash;
      e.node = w[1];
    } else {
      e.kind = FaultKind::kPartition;
      const auto sides = split(w[1], '|');
      if (sides.size() != 2 || sides[0].empty() || sides[1].empty()) {
        throw bad("two sides separated by '|', such as 'partition c1|redis-1 at 5s for 10s'");
      }
      e.side_a = split(sides[0], ',');
      e.side_b = split(sides[1], ',');
    }
  } else {
    throw bad("one of pause, drift, jump, crash, partition, heal");
  }
  return e;
}

}  // namespace locksim::faults
