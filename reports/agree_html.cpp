#include "reports/agree_html.h"

#include <cstdint>
#include <string>

#include "env/assert.h"
#include "env/parse.h"
#include "reports/matrix.h"
#include "reports/timeline_svg.h"

namespace locksim::reports {

namespace {

using Json = nlohmann::ordered_json;

std::string text_or_dash(const Json& j) {
  return j.is_null() ? std::string("-") : j.get<std::string>();
}

// A verdict cell, coloured as matrix.html colours its cells.
std::string verdict_td(const Json& side, bool differs) {
  const std::string verdict = side["verdict"].get<std::string>();
  const bool known =
      verdict == "violation" || verdict == "liveness" || verdict == "safe" || verdict == "unknown";
  LOCKSIM_ASSERT_MSG(known, "found_as_scenario gives one of four verdicts");
  std::string title = std::to_string(side["overlaps"].get<int>()) + " overlaps, " +
                      std::to_string(side["acquisitions"].get<int>()) + " acquisitions, " +
                      std::to_string(side["nemesis_steps"].get<int>()) + " nemesis steps";
  for (const Json& e : side["errors"]) title += "; error: " + e.get<std::string>();
  return "<td class=\"" + verdict + (differs ? " gatefail" : "") + "\" title=\"" +
         xml_escape(title) + "\">" + xml_escape(verdict) + "</td>";
}

// Live's first overlap minus the simulation's, when both have one: the
// timing difference a reader weighs ("+0.065s"; "-" otherwise).
std::string overlap_difference(const Json& row) {
  const Json& a = row["simulation"]["first_overlap_ns"];
  const Json& b = row["live"]["first_overlap_ns"];
  if (a.is_null() || b.is_null()) return "-";
  const int64_t d = b.get<int64_t>() - a.get<int64_t>();
  return (d < 0 ? "-" : "+") + format_seconds(d < 0 ? -d : d);
}

std::string expressible_row(const Json& row) {
  const bool agree = row["agree"].get<bool>();
  const Json& sim = row["simulation"];
  const Json& live = row["live"];
  return "<tr data-scenario=\"" + xml_escape(row["scenario"].get<std::string>()) + "\"><td>" +
         "<code>" + xml_escape(row["scenario"].get<std::string>()) + "</code></td><td>" +
         xml_escape(text_or_dash(row["expected"])) + "</td>" + verdict_td(sim, !agree) +
         verdict_td(live, !agree) + "<td>" + xml_escape(text_or_dash(sim["first_overlap"])) +
         " / " + xml_escape(text_or_dash(live["first_overlap"])) + "</td><td>" +
         xml_escape(overlap_difference(row)) + "</td><td>" + (agree ? "yes" : "<b>no</b>") +
         "</td></tr>\n";
}

}  // namespace

std::string agree_html(const nlohmann::ordered_json& report) {
  const Json& sum = report["summary"];
  std::string out =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>locksim agree</title>\n";
  out += report_style();
  out += "</head><body>\n<h1>locksim agree: the simulation and real servers</h1>\n<p>Scenarios: " +
         std::to_string(sum["scenarios"].get<int>()) +
         "; expressible live: " + std::to_string(sum["expressible"].get<int>()) +
         "; agreeing: " + std::to_string(sum["agree"].get<int>()) + "; time scale " +
         xml_escape(sum["time_scale"].get<std::string>()) +
         ".</p>\n<p>Each verdict as a scenario states it (red: violation, yellow: liveness, "
         "green: safe, purple: unknown); a black frame marks a scenario whose two verdicts "
         "differ. Hover a verdict for its counts. The difference is live's first overlap "
         "minus the simulation's.</p>\n<table class=\"matrix\">\n<tr><th>scenario</th>"
         "<th>expects</th><th>simulation</th><th>live</th><th>first overlap (sim / live)</th>"
         "<th>difference</th><th>agree</th></tr>\n";
  std::string refused;
  for (const Json& row : report["scenarios"]) {
    if (row["expressible"].get<bool>()) {
      out += expressible_row(row);
      continue;
    }
    const std::string name = row["scenario"].get<std::string>();
    refused += "<tr data-scenario=\"" + xml_escape(name) + "\"><td><code>" + xml_escape(name) +
               "</code></td><td style=\"text-align: left\">" +
               xml_escape(row["why"].get<std::string>()) + "</td></tr>\n";
  }
  out +=
      "</table>\n<h2>Not expressible live</h2>\n<table class=\"matrix\">\n<tr><th>scenario</th>"
      "<th>why</th></tr>\n" +
      refused + "</table>\n</body></html>\n";
  LOCKSIM_ASSERT(out.find("<script") == std::string::npos);
  return out;
}

}  // namespace locksim::reports
