// matrix.html: one self-contained page (inline CSS, inline SVG, no script,
// nothing fetched), so it opens from a CI artifact or an email attachment.
#include <optional>

#include "env/assert.h"
#include "env/parse.h"
#include "reports/matrix.h"
#include "reports/timeline_svg.h"

namespace locksim::reports {

const char* report_style() {
  return R"(<style>
body { font-family: sans-serif; margin: 1.5em; }
table.matrix { border-collapse: collapse; }
table.matrix td, table.matrix th { border: 1px solid #999; padding: 4px 8px; text-align: center; }
td.violation { background: #f4a6a6; }
td.liveness { background: #ffe28a; }
td.safe { background: #b9e4b0; }
td.lowcov { background: #e3efe0; color: #555; }
td.unknown { background: #d9c3f0; }
td.gatefail { outline: 3px solid #000; outline-offset: -3px; }
td a { color: inherit; }
.cx { margin: 2em 0; border-top: 1px solid #ccc; }
code { background: #f3f3f3; padding: 1px 4px; }
</style>
)";
}

namespace {

std::string anchor(const MatrixCell& c) {
  return "cx-" + c.algorithm + "-" + c.profile;
}

std::string cell_class(const MatrixCell& c) {
  std::string cls = c.safety > 0       ? "violation"
                    : c.unknown > 0    ? "unknown"
                    : c.liveness > 0   ? "liveness"
                    : c.low_coverage() ? "lowcov"
                                       : "safe";
  if (!c.gate.holds) cls += " gatefail";
  return cls;
}

std::string cell_td(const MatrixCell& c, bool has_timeline) {
  LOCKSIM_ASSERT(c.safety + c.liveness + c.unknown <= c.runs);
  std::string text = c.safety > 0 ? std::to_string(c.safety) + "/" + std::to_string(c.runs)
                     : c.liveness > 0
                         ? "L " + std::to_string(c.liveness) + "/" + std::to_string(c.runs)
                         : "0/" + std::to_string(c.runs);
  if (c.unknown > 0) text += " ?" + std::to_string(c.unknown);
  if (c.latent > 0) text += " ~" + std::to_string(c.latent);
  if (c.never_told > 0) text += " !" + std::to_string(c.never_told);
  if (c.data_runs > 0) text += "<br>" + data_brief(c);
  if (has_timeline) text = "<a href=\"#" + xml_escape(anchor(c)) + "\">" + text + "</a>";
  std::string title =
      c.algorithm + " × " + c.profile + ": " + counted(c.safety, "violation") + ", " +
      std::to_string(c.liveness) + " liveness, " +
      (c.unknown > 0 ? std::to_string(c.unknown) +
                           " unknown (could not finish; first: " + c.first_unknown_replay + "), "
                     : std::string()) +
      std::to_string(c.latent) + " latent, " + std::to_string(c.never_told) +
      " never told, coverage " + std::to_string(static_cast<int64_t>(c.coverage() * 100 + 0.5)) +
      "%";
  if (const std::optional<int64_t> median = c.median_seeds_to_violation())
    title +=
        ", a violation every " + (*median == 1 ? "seed" : counted(*median, "seed")) + " (median)";
  if (c.data_runs > 0) {
    title += ", " + std::to_string(c.data_violations) + " of " + std::to_string(c.data_runs) +
             " runs broke the guarded data";
  }
  if (!c.expected.empty()) title += ", expected " + c.expected;
  if (!c.expected_data.empty()) title += ", data " + c.expected_data;
  if (c.gate.gated) title += c.gate.holds ? ", gate holds" : ", GATE: " + c.gate.failure;
  if (c.gate.not_judged) title += ", gate: not judged";
  if (!c.note.empty()) title += " — " + c.note;
  return "<td class=\"" + cell_class(c) + "\" data-cell=\"" +
         xml_escape(c.algorithm + "/" + c.profile) + "\" title=\"" + xml_escape(title) + "\">" +
         text + "</td>";
}

std::string counterexample(const MatrixCell& c, const std::string& svg) {
  const bool safety = c.first_violation_seed.has_value();
  LOCKSIM_ASSERT_MSG(safety || c.first_liveness_seed, "a timeline is drawn for a finding only");
  const uint64_t seed = safety ? *c.first_violation_seed : *c.first_liveness_seed;
  const std::string& replay = safety ? c.first_violation_replay : c.first_liveness_replay;
  return "<div class=\"cx\" id=\"" + xml_escape(anchor(c)) + "\">\n<h3>" +
         xml_escape(c.algorithm + " × " + c.profile) + ": first " +
         (safety ? "violation" : "liveness finding") + ", seed " + std::to_string(seed) +
         "</h3>\n<p>replay: <code>" + xml_escape(replay) + "</code></p>\n" +
         (c.shrunk_file.empty()
              ? ""
              : "<p>shrunk: <a href=\"" + xml_escape(c.shrunk_file) + "\">" +
                    xml_escape(c.shrunk_summary) + "</a> (replay: <code>locksim run --scenario " +
                    xml_escape(c.shrunk_file) + "</code> in this directory)</p>\n") +
         (c.shrunk_error.empty() ? "" : "<p>not shrunk: " + xml_escape(c.shrunk_error) + "</p>\n") +
         (c.shrunk_story.empty()
              ? ""
              : "<pre class=\"story\">" + xml_escape(c.shrunk_story) + "</pre>\n") +
         svg + "</div>\n";
}

}  // namespace

std::string matrix_html(const Matrix& m, const std::map<std::string, std::string>& timelines) {
  std::string out =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>locksim sweep</title>\n";
  out += report_style();
  out += "</head><body>\n<h1>locksim sweep</h1>\n<p>" +
         counted(static_cast<int64_t>(m.plan.algorithms.size()), "algorithm") + " × " +
         counted(static_cast<int64_t>(m.plan.profiles.size()), "profile") + " × seeds " +
         std::to_string(m.plan.seed_first) + ".." + std::to_string(m.plan.seed_last) + "; " +
         xml_escape(coverage_text(m)) +
         ".</p>\n<p class=\"gate\">Gate: " + xml_escape(gate_text(m)) + ".</p>\n" +
         (unjudged_text(m).empty()
              ? std::string()
              : "<p class=\"unjudged\">" + xml_escape(unjudged_text(m)) + ".</p>\n") +
         "<p>Red: mutual-exclusion violations (violating runs / runs). Yellow: liveness "
         "only. Green: clean. Pale: clean but low fault coverage (under 25% of runs had a fault "
         "touch a holder; never a none cell, which has no faults): not evidence of safety. ~N: "
         "runs with a latent finding (lease exposed, "
         "nobody stepped in). !N: runs in which a holder was never told (the store dropped its "
         "lease while the holder believed it valid, and nothing told it). data ok / data ✗N: runs "
         "whose guarded resource's data broke "
         "(stale write accepted, lost update, oversell). Black frame: the cell breaks its "
         "expectation. "
         "Click a cell for its first counterexample.</p>\n<table "
         "class=\"matrix\">\n<tr><th>algorithm</th>";
  for (const auto& p : m.plan.profiles) out += "<th>" + xml_escape(p) + "</th>";
  out += "</tr>\n";
  std::string sections;
  for (size_t a = 0; a < m.plan.algorithms.size(); ++a) {
    out += "<tr><th>" + xml_escape(m.plan.algorithms[a]) + "</th>";
    for (size_t p = 0; p < m.plan.profiles.size(); ++p) {
      const MatrixCell& c = m.cell(a, p);
      const auto it = timelines.find(c.algorithm + "/" + c.profile);
      out += cell_td(c, it != timelines.end());
      if (it != timelines.end()) sections += counterexample(c, it->second);
    }
    out += "</tr>\n";
  }
  out += "</table>\n";
  // No cell has a finding: no heading over nothing.
  if (!sections.empty()) {
    out +=
        "<h2>Counterexamples</h2>\n<p>Bars: held intervals (ground truth). Red: two "
        "holders at once. Orange: faults (nemesis lane, and the lanes they target). Ticks: ops "
        "(grey invoke, green ok, black fail, pink info). Hover for details.</p>\n" +
        sections;
  }
  out += "</body></html>\n";
  LOCKSIM_ASSERT(out.find("<script") == std::string::npos);
  return out;
}

}  // namespace locksim::reports
