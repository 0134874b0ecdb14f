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

nlohmann::ordered_json run_json(const std::optional<ConfirmingRun>& run) {
  if (!run) return nullptr;
  nlohmann::ordered_json j;
  j["size_ns"] = run->size.ns;
  j["exposed"] = run->failed;
  j["replay"] = run->replay_command;
  return j;
}

// "8.001s": milliseconds are the search's unit.
std::string seconds(Duration d) {
  return format_seconds(d.ns);
}

std::string percent_text(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.2f%%", p);
  return buf;
}

// The first sentence: what was found, in the range searched.
std::string finding_text(const MarginResult& m) {
  const std::string what = m.algorithm + " under a " + to_string(m.kind) + " (seed " +
                           std::to_string(m.seed) + ", ttl " + format_duration(m.lease) +
                           ", hold " + format_duration(m.hold) + ")";
  const std::string range =
      "searched " + format_duration(m.range_lo) + ".." + format_duration(m.range_hi);
  switch (m.outcome) {
    case Bisection::Outcome::kFound:
      return "margin: " + what + " stops protecting its holder at " + seconds(m.above->size) +
             " (" + range + " to 1%; " + m.position + "); a " + seconds(m.below->size) +
             " fault still holds.";
    case Bisection::Outcome::kBreaksAtAnySize:
      return "margin: " + what + " fails at every size: " +
             (m.above->size == Duration::zero()
                  ? std::string("already with no fault at all")
                  : "already at " + seconds(m.above->size) + ", the smallest searched") +
             " (" + range + ").";
    case Bisection::Outcome::kNeverBreaks:
      return "margin: " + what + " never failed up to " + seconds(m.below->size) + " (" + range +
             "; " + m.position + ").";
  }
  return "";
}

}  // namespace

double difference_percent(const MarginResult& m) {
  if (m.outcome != Bisection::Outcome::kFound || m.above->size.ns == 0) return 0.0;
  const double p = 100.0 * static_cast<double>(harness::margin::difference(m).ns) /
                   static_cast<double>(m.above->size.ns);
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
  j["range"] = {{"lo_ns", m.range_lo.ns}, {"hi_ns", m.range_hi.ns}};
  j["position"] = m.position;
  j["outcome"] = outcome_name(m.outcome);
  j["margin_ns"] = m.above && m.outcome == Bisection::Outcome::kFound
                       ? nlohmann::ordered_json(m.above->size.ns)
                       : nlohmann::ordered_json(nullptr);
  j["unit"] = "ns";
  j["theory"] = {{"formula", m.theory_formula}, {"ns", m.theory.ns}};
  if (m.outcome == Bisection::Outcome::kFound) {
    j["difference"] = {{"ns", harness::margin::difference(m).ns},
                       {"percent_of_margin", difference_percent(m)}};
  } else {
    j["difference"] = nullptr;
  }
  j["below"] = run_json(m.below);
  j["above"] = run_json(m.above);
  j["probes"] = m.probes;
  return j;
}

std::string margin_json_text(const MarginResult& m) {
  return margin_to_json(m).dump(2) + "\n";
}

std::string margin_summary(const MarginResult& m) {
  std::string out = finding_text(m);
  out += " Theory: " + m.theory_formula + " = " + seconds(m.theory);
  if (m.outcome == Bisection::Outcome::kFound) {
    const double p = difference_percent(m);
    out += "; measured - theory = " +
           (harness::margin::difference(m) < Duration::zero()
                ? "-" + seconds(-harness::margin::difference(m))
                : "+" + seconds(harness::margin::difference(m))) +
           " (" + percent_text(p) + " of the margin" +
           (std::abs(p) > 1.0 ? ", beyond 1%: see docs/measurements.md" : "") + ")";
  }
  out += ". " + std::to_string(m.probes) + " runs.\n";
  if (m.below) out += "  holds:  " + m.below->replay_command + "\n";
  if (m.above) out += "  breaks: " + m.above->replay_command + "\n";
  return out;
}

}  // namespace locksim::reports
