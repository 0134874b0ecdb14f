#include "faults/fault_schedule.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <sstream>

#include "env/assert.h"
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
    case FaultKind::kDelay:
      return "delay";
    case FaultKind::kLoss:
      return "loss";
    case FaultKind::kHang:
      return "hang";
  }
  return "?";
}

namespace {

// The shortest text that reads back as the same rate.
std::string format_rate(double v) {
  char buf[32];
  const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
  LOCKSIM_ASSERT(ec == std::errc());
  return std::string(buf, ptr);
}

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

std::string FaultEvent::when() const {
  std::string out = format_duration(at);
  if (after_grant) {
    out += unless_held ? " on held" : " on grant";
    if (*after_grant > Duration::zero()) out += "+" + format_duration(*after_grant);
  }
  return out;
}

std::string FaultEvent::describe() const {
  std::string out;
  switch (kind) {
    case FaultKind::kPause:
      return "pause " + node + " at " + when() + " for " + format_duration(duration);
    case FaultKind::kSetDrift:
      return "drift " + node + " at " + when() + " " + (drift_ppm >= 0 ? "+" : "") +
             std::to_string(drift_ppm) + "ppm";
    case FaultKind::kJumpClock:
      return "jump " + node + " at " + when() + " " + signed_duration(jump);
    case FaultKind::kHang:
    case FaultKind::kCrash:
      out = to_string(kind) + std::string(" ") + node + " at " + when();
      if (duration > Duration::zero()) out += " for " + format_duration(duration);
      return out;
    case FaultKind::kPartition:
      out = "partition " + join(side_a) + (one_way ? "->" : "|") + join(side_b) + " at " + when();
      if (duration > Duration::zero()) out += " for " + format_duration(duration);
      return out;
    case FaultKind::kHeal:
      return "heal at " + when();
    case FaultKind::kDelay:
      return "delay " + join(side_a) + "|" + join(side_b) + " at " + when() + " for " +
             format_duration(duration) + " by " + format_duration(delay);
    case FaultKind::kLoss:
      out = "loss " + join(side_a) + "|" + join(side_b) + " at " + when() + " " +
            format_rate(loss_probability);
      if (duration > Duration::zero()) out += " for " + format_duration(duration);
      return out;
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
    case FaultKind::kHang:
    case FaultKind::kCrash:
      if (duration > Duration::zero()) return {node, format_duration(duration)};
      return {node};
    case FaultKind::kPartition: {
      std::vector<std::string> v = {join(side_a) + "->" + join(side_b)};
      if (!one_way) v = {join(side_a), join(side_b)};
      if (duration > Duration::zero()) v.push_back(format_duration(duration));
      return v;
    }
    case FaultKind::kHeal:
      return {};
    case FaultKind::kDelay:
      return {join(side_a), join(side_b), format_duration(duration), format_duration(delay)};
    case FaultKind::kLoss: {
      std::vector<std::string> v = {join(side_a), join(side_b), format_rate(loss_probability)};
      if (duration > Duration::zero()) v.push_back(format_duration(duration));
      return v;
    }
  }
  return {};
}

namespace {

using Bad = std::function<ConfigError(const std::string&)>;

// "A,B|C,D" (or "A,B->C,D" where `arrow_ok`) into the event's two sides.
void parse_sides(const std::string& word, bool arrow_ok, FaultEvent& e, const Bad& bad) {
  const size_t arrow = word.find("->");
  std::vector<std::string> sides;
  if (arrow_ok && arrow != std::string::npos) {
    sides = {word.substr(0, arrow), word.substr(arrow + 2)};
    e.one_way = true;
  } else {
    sides = split(word, '|');
  }
  if (sides.size() != 2 || sides[0].empty() || sides[1].empty()) {
    throw bad(std::string("two sides separated by '|'") + (arrow_ok ? " or '->'" : "") +
              ", such as 'c1|redis-1'");
  }
  e.side_a = split(sides[0], ',');
  e.side_b = split(sides[1], ',');
  for (const auto* side : {&e.side_a, &e.side_b}) {
    for (size_t i = 0; i < side->size(); ++i) {
      const std::string& n = (*side)[i];
      if (n.empty()) throw bad("node names separated by ',' on each side");
      if (std::find(side->begin(), side->begin() + static_cast<ptrdiff_t>(i), n) !=
          side->begin() + static_cast<ptrdiff_t>(i)) {
        throw bad("each node once on its side, got '" + n + "' twice");
      }
    }
  }
}

// The D of an optional "for D": positive, since leaving "for D" out is how a
// fault says it lasts (a crash stays down, a partition waits for a heal), and
// "for 0s" would read as a fault that ends at once but mean one that never does.
Duration parse_for(const std::string& text, const std::string& f, const Bad& bad) {
  const Duration d = parse_duration(text, f);
  if (d <= Duration::zero()) {
    throw bad(
        "a positive D in 'for D' (leave 'for D' out for a fault that lasts to a heal, a "
        "restart or the run's end)");
  }
  return d;
}

double parse_rate(const std::string& text, const Bad& bad) {
  double v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  // Written so that NaN fails too.
  if (ec != std::errc() || ptr != text.data() + text.size() || !(v >= 0.0 && v <= 1.0)) {
    throw bad("a loss rate from 0 to 1, such as 'loss c1|redis-1 at 5s 0.2 for 10s'");
  }
  return v;
}

// delay SIDES at T for D by X
void parse_delay(const std::vector<std::string>& w, FaultEvent& e, const std::string& f,
                 const Bad& bad) {
  if (w.size() != 8 || w[4] != "for" || w[6] != "by") throw bad("'delay A,B|C at T for D by X'");
  e.kind = FaultKind::kDelay;
  parse_sides(w[1], false, e, bad);
  e.duration = parse_duration(w[5], f);
  e.delay = parse_duration(w[7], f);
  if (e.duration <= Duration::zero() || e.delay <= Duration::zero()) {
    throw bad("a positive duration D and delay X in 'delay A,B|C at T for D by X'");
  }
}

// loss SIDES at T RATE [for D]
void parse_loss(const std::vector<std::string>& w, FaultEvent& e, const std::string& f,
                const Bad& bad) {
  if (w.size() != 5 && !(w.size() == 7 && w[5] == "for")) {
    throw bad("'loss A,B|C at T RATE [for D]'");
  }
  e.kind = FaultKind::kLoss;
  parse_sides(w[1], false, e, bad);
  e.loss_probability = parse_rate(w[4], bad);
  if (w.size() == 7) e.duration = parse_for(w[6], f, bad);
}

void parse_node_fault(const std::vector<std::string>& w, FaultEvent& e, const std::string& f,
                      const Bad& bad) {
  const std::string& verb = w[0];
  e.node = w[1];
  if (verb == "pause") {
    if (w.size() != 6 || w[4] != "for") throw bad("'pause NODE at T for D'");
    e.kind = FaultKind::kPause;
    e.duration = parse_duration(w[5], f);
  } else if (verb == "drift") {
    if (w.size() != 5 || w[4].size() < 4 || w[4].substr(w[4].size() - 3) != "ppm") {
      throw bad("'drift NODE at T PPMppm' such as 'drift c2 at 0s +50000ppm'");
    }
    e.kind = FaultKind::kSetDrift;
    std::string n = w[4].substr(0, w[4].size() - 3);
    if (!n.empty() && n[0] == '+') n = n.substr(1);
    e.drift_ppm = parse_integer(n, f, -999'999, 999'999);
  } else if (verb == "jump") {
    if (w.size() != 5) throw bad("'jump NODE at T +D' such as 'jump redis-1 at 5s +20s'");
    e.kind = FaultKind::kJumpClock;
    std::string d = w[4];
    const bool back = !d.empty() && d[0] == '-';
    if (!d.empty() && (d[0] == '+' || d[0] == '-')) d = d.substr(1);
    e.jump = parse_duration(d, f);
    if (back) e.jump = -e.jump;
  } else {
    if (w.size() != 4 && !(w.size() == 6 && w[4] == "for"))
      throw bad("'" + verb + " NODE at T [for D]'");
    if (w.size() == 6) e.duration = parse_for(w[5], f, bad);
    e.kind = verb == "hang" ? FaultKind::kHang : FaultKind::kCrash;
  }
}

// "on grant", "on grant+D", "on held" or "on held+D" right after "at T":
// taken out of `w`, so the rest reads as without it.
void take_grant_trigger(std::vector<std::string>& w, FaultEvent& e, const std::string& f,
                        const Bad& bad) {
  if (w.size() < 6 || w[4] != "on") return;
  const std::string& g = w[5];
  const std::string word = g.rfind("held", 0) == 0 ? "held" : "grant";
  e.unless_held = word == "held";
  if (g == word) {
    e.after_grant = Duration::zero();
  } else if (g.rfind(word + "+", 0) == 0) {
    e.after_grant = parse_duration(g.substr(word.size() + 1), f);
  } else {
    throw bad("'on grant', 'on grant+D', 'on held' or 'on held+D' after 'at T'");
  }
  w.erase(w.begin() + 4, w.begin() + 6);
}

}  // namespace

FaultEvent parse_fault(std::string_view text, std::string_view field) {
  std::istringstream in{std::string(text)};
  std::vector<std::string> w;
  for (std::string word; in >> word && w.size() < 16;) w.push_back(word);
  const std::string f(field);
  const Bad bad = [&](const std::string& expected) -> ConfigError {
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
    throw bad("'pause|drift|jump|crash|hang|partition|delay|loss TARGET at T ...' or 'heal at T'");
  }
  e.at = parse_duration(w[3], f);
  take_grant_trigger(w, e, f, bad);
  if (verb == "pause" || verb == "drift" || verb == "jump" || verb == "crash" || verb == "hang") {
    parse_node_fault(w, e, f, bad);
  } else if (verb == "partition") {
    if (w.size() != 4 && !(w.size() == 6 && w[4] == "for")) {
      throw bad("'partition A,B|C,D at T [for D]' or 'partition A->B at T [for D]'");
    }
    if (w.size() == 6) e.duration = parse_for(w[5], f, bad);
    e.kind = FaultKind::kPartition;
    parse_sides(w[1], true, e, bad);
  } else if (verb == "delay") {
    parse_delay(w, e, f, bad);
  } else if (verb == "loss") {
    parse_loss(w, e, f, bad);
  } else {
    throw bad("one of pause, drift, jump, crash, hang, partition, delay, loss, heal");
  }
  const auto grantee = [](const std::string& n) { return n == kGranteeTarget; };
  const bool names_grantee = grantee(e.node) ||
                             std::any_of(e.side_a.begin(), e.side_a.end(), grantee) ||
                             std::any_of(e.side_b.begin(), e.side_b.end(), grantee);
  if (names_grantee && (!e.after_grant || e.unless_held)) {
    throw bad(
        "'on grant' after the time for a fault on @grantee (the client the lock is granted "
        "to), such as 'partition @grantee|redis-1 at 5s on grant for 10s'");
  }
  return e;
}

}  // namespace locksim::faults
