#include "reports/margin_report.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "env/parse.h"

namespace locksim::reports {

namespace {

using harness::margin::Bisection;
using harness::margin::ConfirmingRun;
using harness::margin::MarginResult;

const char* outcome_name(Bisection::Outcome o) {
  switch (o) {
    case Bisection::Outcome::kFound:
      return "found";
    case Bisection::Outcome::kBreaksAtAnySize:
      return "breaks-at-any-size";
    case Bisection::Outcome::kNeverBreaks:
      return "never-breaks";
  }
  return "?";
}

// "_ns" or "_ppm": every size key names its unit.
std::string unit_suffix(const MarginResult& m) {
  return std::string("_") + unit_name(unit_of(m.kind));
}

nlohmann::ordered_json run_json(const MarginResult& m, const std::optional<ConfirmingRun>& run) {
  if (!run) return nullptr;
  nlohmann::ordered_json j;
  j["size" + unit_suffix(m)] = run->size;
  j["exposed"] = run->failed;
  j["replay"] = run->replay_command;
  return j;
}

// "8.001s" (milliseconds are the search's unit) or "+10305ppm".
std::string size_text(const MarginResult& m, int64_t size) {
  return format_size(m.kind, size);
}

// The search's resolution with its unit: "1ms", "1ppm".
std::string resolution_text(const MarginResult& m) {
  if (unit_of(m.kind) == harness::margin::Unit::kNanos) {
    return format_duration(Duration{m.resolution});
  }
  return std::to_string(m.resolution) + "ppm";
}

// A range's end as given: "20s" (a duration as --range takes it),
// "+999999ppm", or "999999ppm slow".
std::string range_end_text(const MarginResult& m, int64_t size) {
  if (unit_of(m.kind) == harness::margin::Unit::kNanos) return format_duration(Duration{size});
  return size_text(m, size);
}

// ", 4.05 ticks": a session margin also in ZooKeeper's unit.
std::string ticks_text(const MarginResult& m, int64_t size) {
  if (m.tick == Duration::zero()) return "";
  char buf[48];
  std::snprintf(buf, sizeof buf, " (%.2f ticks of %s)",
                static_cast<double>(size) / static_cast<double>(m.tick.ns),
                format_duration(m.tick).c_str());
  return buf;
}

std::string percent_text(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.2f%%", p);
  return buf;
}

// The drift scan's sentence (DriftScan): what was tried below the bisected
// edge, and that nothing below the window was.
std::string scan_text(const MarginResult& m) {
  if (!m.scan) return "";
  const harness::margin::DriftScan& s = *m.scan;
  std::string out =
      " A drift's edge is not sharp (it moves when every later event happens), so "
      "below the bisected edge " +
      size_text(m, s.bisected) + " every " + std::to_string(s.step) + "ppm from " +
      size_text(m, s.lo) + " was run (" + std::to_string(s.runs) + " runs): ";
  out += s.found_lower ? size_text(m, m.above->size) + " is the smallest that broke there"
                       : "none broke";
  return out + "; smaller drifts were not tried.";
}

// The first sentence: what was found, in the range searched.
std::string finding_text(const MarginResult& m) {
  const std::string what = m.algorithm + " under a " + to_string(m.kind) + " (seed " +
                           std::to_string(m.seed) + ", " + m.lease_label + " " +
                           format_duration(m.lease) + ", hold " + format_duration(m.hold) + ")";
  const std::string range =
      "searched " + range_end_text(m, m.range_lo) + ".." + range_end_text(m, m.range_hi);
  switch (m.outcome) {
    case Bisection::Outcome::kFound:
      return "margin: " + what + " holds at " + size_text(m, m.below->size) + " and breaks at " +
             size_text(m, m.above->size) + ticks_text(m, m.above->size) + " (" + range + " to " +
             resolution_text(m) + "; " + m.position + ")." + scan_text(m);
    case Bisection::Outcome::kBreaksAtAnySize:
      return "margin: " + what + " fails at every size: " +
             (m.above->size == 0
                  ? std::string("already with no fault at all")
                  : "already at " + size_text(m, m.above->size) + ", the smallest searched") +
             " (" + range + ").";
    case Bisection::Outcome::kNeverBreaks:
      return "margin: " + what + " never failed up to " + size_text(m, m.below->size) + " (" +
             range + "; " + m.position + ").";
  }
  return "";
}

}  // namespace

std::string difference_size_text(const MarginResult& m) {
  const int64_t d = harness::margin::difference(m);
  const std::string sign = d < 0 ? "-" : "+";
  const int64_t mag = d < 0 ? -d : d;
  if (unit_of(m.kind) == harness::margin::Unit::kPpm) return sign + std::to_string(mag) + "ppm";
  return sign + harness::margin::format_exact_seconds(mag);
}

std::string search_resolution_text(const MarginResult& m) {
  return resolution_text(m);
}

bool has_difference(const MarginResult& m) {
  return m.outcome == Bisection::Outcome::kFound && m.theory.has_value();
}

double difference_percent(const MarginResult& m) {
  if (!has_difference(m) || m.above->size == 0) return 0.0;
  const double p = 100.0 * static_cast<double>(harness::margin::difference(m)) /
                   static_cast<double>(m.above->size);
  return std::round(p * 100.0) / 100.0;
}

nlohmann::ordered_json margin_to_json(const MarginResult& m) {
  nlohmann::ordered_json j;
  j["locksim_margin"] = 1;
  j["algorithm"] = m.algorithm;
  j["fault"] = to_string(m.kind);
  j["seed"] = m.seed;
  j["lease_ns"] = m.lease.ns;
  j["hold_ns"] = m.hold.ns;
  const std::string unit = unit_name(unit_of(m.kind));
  j["range"] = {{"lo" + unit_suffix(m), m.range_lo}, {"hi" + unit_suffix(m), m.range_hi}};
  j["position"] = m.position;
  j["outcome"] = outcome_name(m.outcome);
  j["margin" + unit_suffix(m)] = m.above && m.outcome == Bisection::Outcome::kFound
                                     ? nlohmann::ordered_json(m.above->size)
                                     : nlohmann::ordered_json(nullptr);
  j["resolution" + unit_suffix(m)] = m.resolution;
  j["unit"] = unit;
  if (m.scan) {
    j["scan"] = {{"lo" + unit_suffix(m), m.scan->lo},
                 {"hi" + unit_suffix(m), m.scan->hi},
                 {"step" + unit_suffix(m), m.scan->step},
                 {"runs", m.scan->runs},
                 {"bisected" + unit_suffix(m), m.scan->bisected},
                 {"found_lower", m.scan->found_lower}};
  }
  j["theory"] = {{"formula", m.theory_formula},
                 {unit, m.theory ? nlohmann::ordered_json(*m.theory) : nullptr}};
  if (has_difference(m)) {
    j["difference"] = {{unit, harness::margin::difference(m)},
                       {"percent_of_margin", difference_percent(m)},
                       {"within_resolution", harness::margin::within_resolution(m)}};
  } else {
    j["difference"] = nullptr;
  }
  if (m.tick != Duration::zero()) j["tick_ns"] = m.tick.ns;
  j["below"] = run_json(m, m.below);
  j["above"] = run_json(m, m.above);
  j["probes"] = m.probes;
  return j;
}

std::string margin_json_text(const MarginResult& m) {
  return margin_to_json(m).dump(2) + "\n";
}

std::string margin_summary(const MarginResult& m) {
  std::string out = finding_text(m);
  out += " Theory: " + m.theory_formula;
  if (m.theory) out += " = " + size_text(m, *m.theory) + ticks_text(m, *m.theory);
  if (m.outcome == Bisection::Outcome::kNeverBreaks && m.theory && m.below &&
      *m.theory <= m.below->size) {
    // The search and the theory disagree, and a reader would otherwise take
    // the theory's number for the lock's: a lock file whose acquire sets no
    // expiry (SET NX without PX) never loses its lease to a pause at all.
    out += "; nothing broke up to " + size_text(m, m.below->size) +
           ", so the lock does not work as the theory assumes (does its key expire after " +
           m.lease_label + "?)";
  }
  if (has_difference(m)) {
    const double p = difference_percent(m);
    out += "; the smallest size that broke - theory = " + difference_size_text(m) + " (" +
           percent_text(p) + " of the margin)";
    if (harness::margin::within_resolution(m)) {
      out += ": within the search's " + resolution_text(m) + " resolution, so they agree";
    } else {
      out += ", more than the search's " + resolution_text(m) + " resolution" +
             (std::abs(p) > 1.0 ? ", beyond 1%: see docs/measurements.md" : "");
    }
  }
  out += ". " + std::to_string(m.probes) + " runs.\n";
  if (m.below) out += "  holds:  " + m.below->replay_command + "\n";
  if (m.above) out += "  breaks: " + m.above->replay_command + "\n";
  return out;
}

}  // namespace locksim::reports
