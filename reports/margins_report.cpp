#include "reports/margins_report.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "env/assert.h"
#include "env/parse.h"
#include "reports/margin_report.h"
#include "reports/margins_vary.h"
#include "reports/timeline_svg.h"

namespace locksim::reports {

namespace {

using harness::margin::Bisection;
using harness::margin::MarginCell;
using harness::margin::MarginResult;

void check_shapes(const std::vector<MarginCell>& cells, const std::vector<MarginResult>& results) {
  LOCKSIM_ASSERT_MSG(cells.size() == results.size(), "one result per planned cell");
  for (size_t i = 0; i < cells.size(); ++i) {
    LOCKSIM_ASSERT(results[i].algorithm == cells[i].request.base.algorithm);
    LOCKSIM_ASSERT(results[i].kind == cells[i].request.kind);
  }
}

// The --vary setting ("" without): every varied cell names it.
std::string vary_param_of(const std::vector<MarginCell>& cells) {
  for (const MarginCell& c : cells) {
    if (!c.vary_param.empty()) return c.vary_param;
  }
  return "";
}

std::string size_text(const MarginResult& m, int64_t size) {
  return harness::margin::format_size(m.kind, size);
}

std::string percent_text(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.2f%%", p);
  return buf;
}

// The margin column: the size, or what the search saw instead.
std::string margin_text(const MarginResult& m) {
  switch (m.outcome) {
    case Bisection::Outcome::kFound:
      return size_text(m, m.above->size) + " (holds at " + size_text(m, m.below->size) + ")" +
             (m.scan ? " ¹" : "");
    case Bisection::Outcome::kBreaksAtAnySize:
      return "breaks at any size (" + size_text(m, m.range_lo) + ")";
    case Bisection::Outcome::kNeverBreaks:
      return "never within " + size_text(m, m.range_lo) + ".." + size_text(m, m.range_hi);
  }
  return "?";
}

std::string theory_text(const MarginResult& m) {
  if (m.theory_any_size) return "any size";
  return m.theory ? size_text(m, *m.theory) : std::string("never");
}

// "+0.012s (+0.15%)", "agrees: +0.001s, within the 1ms resolution", or
// "agrees" where both say it never breaks in range, or "-" where there is
// nothing to set against.
std::string difference_text(const MarginResult& m) {
  if (m.outcome == Bisection::Outcome::kFound && m.theory) {
    const std::string size =
        difference_size_text(m) + " (" + percent_text(difference_percent(m)) + ")";
    if (harness::margin::within_resolution(m)) {
      return "agrees: " + size + ", within the " + search_resolution_text(m) + " resolution";
    }
    return size;
  }
  if (m.outcome == Bisection::Outcome::kNeverBreaks && !m.theory_any_size &&
      (!m.theory || *m.theory > m.range_hi)) {
    return "agrees (never in range)";
  }
  if (m.outcome == Bisection::Outcome::kBreaksAtAnySize && m.theory_any_size) {
    return "agrees (any size)";
  }
  if (m.outcome != Bisection::Outcome::kNeverBreaks && !m.theory && !m.theory_any_size) {
    return "breaks at " + size_text(m, m.above->size) + " where theory says never";
  }
  return "-";
}

// Beyond 1 % of theory, or broken where theory says never: a finding to
// explain (the issue: "not to hide").
bool beyond_one_percent(const MarginResult& m) {
  if (m.outcome == Bisection::Outcome::kFound && !m.theory && !m.theory_any_size) return true;
  return m.outcome == Bisection::Outcome::kFound && m.theory &&
         std::abs(difference_percent(m)) > 1.0;
}

// ¹ under the drift rows: their edge is known only within the window
// scanned below it (harness/margin/margin.h: DriftScan).
std::string scan_note(const std::vector<MarginCell>& cells,
                      const std::vector<MarginResult>& results) {
  for (size_t i = 0; i < cells.size(); ++i) {
    if (!cells[i].vary_value.empty() || !results[i].scan) continue;
    return "\n¹ A drift's edge is not sharp: a drift moves when every later event happens, "
           "and with it the few milliseconds of network jitter that decide the edge, so a drift "
           "below a held one can break. After the bisection the sizes 1% below its edge were "
           "each run (up to " +
           std::to_string(harness::margin::kDriftScanRunsMax) +
           " runs) and the smallest that broke is the margin; smaller drifts were not tried "
           "(margins.json: scan).\n";
  }
  return "";
}

std::string md_row(const MarginCell& c, const MarginResult& m) {
  return "| " + m.algorithm + " | " + to_string(m.kind) + " | " + c.lease_note + " | " +
         margin_text(m) + " | " + theory_text(m) + " | " + difference_text(m) + " | " +
         std::to_string(m.probes) + " |\n";
}

}  // namespace

std::string timeline_path(const MarginResult& m) {
  return "timelines/" + m.algorithm + "-" + to_string(m.kind) + ".html";
}

double share_of_lease(const MarginResult& m) {
  if (m.outcome == Bisection::Outcome::kNeverBreaks) return -1.0;
  const double size = static_cast<double>(m.above->size);
  if (harness::margin::unit_of(m.kind) == harness::margin::Unit::kPpm) {
    return size / (1e6 + size);
  }
  return std::min(1.0, size / static_cast<double>(m.lease.ns));
}

std::string margins_json_text(const std::vector<MarginCell>& cells,
                              const std::vector<MarginResult>& results) {
  check_shapes(cells, results);
  nlohmann::ordered_json j;
  j["locksim_margins"] = 1;
  j["seed"] = results.empty() ? 0 : results.front().seed;
  j["hold_ns"] = harness::margin::kTableHold.ns;
  j["cells"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < cells.size(); ++i) {
    if (!cells[i].vary_value.empty()) continue;  // in "vary" below
    const nlohmann::ordered_json one = margin_to_json(results[i]);
    nlohmann::ordered_json cell = nlohmann::ordered_json::object();
    for (auto it = one.begin(); it != one.end(); ++it) {
      cell[it.key()] = it.value();
      if (it.key() == "hold_ns") cell["lease_note"] = cells[i].lease_note;
    }
    cell["timeline"] = results[i].above ? nlohmann::ordered_json(timeline_path(results[i]))
                                        : nlohmann::ordered_json(nullptr);
    j["cells"].push_back(cell);
  }
  const std::string param = vary_param_of(cells);
  if (!param.empty()) j["vary"] = vary_json(param, cells, results);
  return j.dump(2) + "\n";
}

std::string margins_markdown(const std::vector<MarginCell>& cells,
                             const std::vector<MarginResult>& results) {
  check_shapes(cells, results);
  std::string out = "# Safety margins\n\n";
  out +=
      "The smallest fault each lock does not survive, found by bisection to 1 ms (a drift: "
      "1 ppm) with both sides confirmed by a run (`locksim margin`), beside theory. One lone "
      "holder, a " +
      format_duration(harness::margin::kTableHold) +
      " hold (Redlock under drift: to the end "
      "of its validity), seed " +
      std::to_string(results.empty() ? 0 : results.front().seed) + ".\n\n";
  out += "| algorithm | fault | lease | margin | theory | measured - theory | runs |\n";
  out += "|---|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < cells.size(); ++i) {
    if (cells[i].vary_value.empty()) out += md_row(cells[i], results[i]);
  }
  std::string beyond;
  for (size_t i = 0; i < cells.size(); ++i) {
    const MarginResult& m = results[i];
    if (cells[i].vary_value.empty() && beyond_one_percent(m)) {
      beyond += "- " + m.algorithm + " " + to_string(m.kind) + ": " + difference_text(m) +
                "; theory " + m.theory_formula + " (docs/measurements.md explains it)\n";
    }
  }
  out += beyond.empty() ? "\nEvery margin found is within 1% of theory.\n"
                        : "\nBeyond 1% of theory:\n\n" + beyond;
  out += scan_note(cells, results);
  const std::string param = vary_param_of(cells);
  if (!param.empty()) out += vary_markdown(param, cells, results);
  return out;
}

namespace {

const char* kStyle = R"(<style>
body { font-family: sans-serif; margin: 1.5em; }
table.margins { border-collapse: collapse; }
table.margins td, table.margins th { border: 1px solid #999; padding: 4px 8px; vertical-align: top; }
td.m0 { background: #f4a6a6; }
td.m1 { background: #ffc98a; }
td.m2 { background: #ffe28a; }
td.m3 { background: #b9e4b0; }
td.never { background: #cfe3f7; }
details { font-size: 85%; }
code { background: #f3f3f3; padding: 1px 4px; }
</style>
)";

// Red below 5 % of the lease, orange below 25 %, yellow below 50 %, else green.
std::string margin_class(const MarginResult& m) {
  const double share = share_of_lease(m);
  if (share < 0) return "never";
  return share < 0.05 ? "m0" : share < 0.25 ? "m1" : share < 0.5 ? "m2" : "m3";
}

std::string share_text(const MarginResult& m) {
  const double share = share_of_lease(m);
  if (share < 0) return "";
  char buf[48];
  std::snprintf(buf, sizeof buf, " (%.1f%% of the lease)", share * 100.0);
  return buf;
}

std::string replays_html(const MarginResult& m) {
  std::string out = "<details><summary>runs</summary>";
  if (m.below) {
    out += "<p>holds at " + xml_escape(size_text(m, m.below->size)) + ": <code>" +
           xml_escape(m.below->replay_command) + "</code></p>";
  }
  if (m.above) {
    out += "<p>breaks at " + xml_escape(size_text(m, m.above->size)) + ": <code>" +
           xml_escape(m.above->replay_command) + "</code> (<a href=\"" +
           xml_escape(timeline_path(m)) + "\">its timeline</a>)</p>";
  }
  return out + "</details>";
}

std::string html_row(const MarginCell& c, const MarginResult& m) {
  return "<tr><td>" + xml_escape(m.algorithm) + "</td><td>" + xml_escape(to_string(m.kind)) +
         "</td><td>" + xml_escape(c.lease_note) + "</td><td class=\"" + margin_class(m) + "\">" +
         xml_escape(margin_text(m)) + xml_escape(share_text(m)) + replays_html(m) + "</td><td>" +
         xml_escape(theory_text(m)) + "<br><small>" + xml_escape(m.theory_formula) +
         "</small></td><td>" + xml_escape(difference_text(m)) + "</td><td>" +
         std::to_string(m.probes) + "</td></tr>\n";
}

}  // namespace

std::string margins_html(const std::vector<MarginCell>& cells,
                         const std::vector<MarginResult>& results) {
  check_shapes(cells, results);
  std::string out =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>locksim "
      "margins</title>\n";
  out += kStyle;
  out +=
      "</head><body>\n<h1>Safety margins</h1>\n<p>The smallest fault each lock does not "
      "survive (bisection to 1 ms or 1 ppm, both sides confirmed by a run; a drift also scanned 1% "
      "below its edge), coloured by the share of the "
      "lease the fault takes at the edge: red below 5%, orange below 25%, yellow below 50%, "
      "green above, blue where it never broke in the range searched.</p>\n";
  out +=
      "<table class=\"margins\">\n<tr><th>algorithm</th><th>fault</th><th>lease</th>"
      "<th>margin</th><th>theory</th><th>measured - theory</th><th>runs</th></tr>\n";
  for (size_t i = 0; i < cells.size(); ++i) {
    if (cells[i].vary_value.empty()) out += html_row(cells[i], results[i]);
  }
  out += "</table>\n";
  const std::string param = vary_param_of(cells);
  if (!param.empty()) out += vary_html(param, cells, results);
  out += "</body></html>\n";
  return out;
}

}  // namespace locksim::reports
