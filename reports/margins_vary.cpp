#include "reports/margins_vary.h"

#include <algorithm>
#include <cstdio>

#include "env/assert.h"
#include "reports/timeline_svg.h"

namespace locksim::reports {

namespace {

using harness::margin::Bisection;
using harness::margin::MarginCell;
using harness::margin::MarginResult;

struct Series {
  std::string algorithm;
  harness::margin::Kind kind = harness::margin::Kind::kPause;
  std::vector<size_t> cells;  // indexes of its points, in plan order
};

std::vector<Series> series_of(const std::vector<MarginCell>& cells,
                              const std::vector<MarginResult>& results) {
  LOCKSIM_ASSERT(cells.size() == results.size());
  std::vector<Series> out;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (cells[i].vary_value.empty()) continue;
    const std::string& algorithm = cells[i].request.base.algorithm;
    if (out.empty() || out.back().algorithm != algorithm ||
        out.back().kind != cells[i].request.kind) {
      out.push_back(Series{algorithm, cells[i].request.kind, {}});
    }
    out.back().cells.push_back(i);
  }
  return out;
}

// A size in the plot's unit: seconds for a duration, ppm for a drift.
double plotted(harness::margin::Kind kind, int64_t size) {
  return harness::margin::unit_of(kind) == harness::margin::Unit::kNanos
             ? static_cast<double>(size) / 1e9
             : static_cast<double>(size);
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string coord(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string unit_suffix(harness::margin::Kind kind) {
  return "_" + std::string(unit_name(unit_of(kind)));
}

// The plot's frame: 360 x 220 px, the data inside the margins.
struct Frame {
  double x_lo = 0, x_hi = 1, y_hi = 1;
  static constexpr double kWidth = 360, kHeight = 220, kLeft = 56, kRight = 16, kTop = 16,
                          kBottom = 40;
  double px(double x) const {
    return kLeft + (x - x_lo) / (x_hi - x_lo) * (kWidth - kLeft - kRight);
  }
  double py(double y) const { return kTop + (1.0 - y / y_hi) * (kHeight - kTop - kBottom); }
};

Frame frame_of(const Series& s, const std::vector<MarginCell>& cells,
               const std::vector<MarginResult>& results) {
  Frame f;
  f.x_lo = cells[s.cells.front()].vary_x;
  f.x_hi = cells[s.cells.back()].vary_x;
  if (f.x_hi <= f.x_lo) f.x_hi = f.x_lo + 1;
  double top = 0;
  for (const size_t i : s.cells) {
    const MarginResult& m = results[i];
    if (m.above) top = std::max(top, plotted(m.kind, m.above->size));
    if (m.theory) top = std::max(top, plotted(m.kind, *m.theory));
  }
  f.y_hi = top > 0 ? top * 1.1 : 1.0;
  return f;
}

std::string axes_svg(const Frame& f, const std::string& x_label, const std::string& y_label) {
  const std::string x0 = coord(Frame::kLeft), x1 = coord(Frame::kWidth - Frame::kRight);
  const std::string y0 = coord(f.py(0)), y1 = coord(Frame::kTop);
  std::string out = "<line x1=\"" + x0 + "\" y1=\"" + y0 + "\" x2=\"" + x1 + "\" y2=\"" + y0 +
                    "\" stroke=\"#333\"/><line x1=\"" + x0 + "\" y1=\"" + y0 + "\" x2=\"" + x0 +
                    "\" y2=\"" + y1 + "\" stroke=\"#333\"/>";
  out += "<text x=\"" + x0 + "\" y=\"" + coord(f.py(0) + 14) + "\" font-size=\"10\">" +
         num(f.x_lo) + "</text><text x=\"" + x1 + "\" y=\"" + coord(f.py(0) + 14) +
         "\" font-size=\"10\" text-anchor=\"end\">" + num(f.x_hi) + "</text>";
  // The largest value plotted, at its height (the frame's top is 10 % above).
  out += "<text x=\"" + coord(Frame::kLeft - 4) + "\" y=\"" + coord(f.py(f.y_hi / 1.1)) +
         "\" font-size=\"10\" text-anchor=\"end\">" + num(f.y_hi / 1.1) + "</text>";
  out += "<text x=\"" + coord(Frame::kLeft - 4) + "\" y=\"" + y0 +
         "\" font-size=\"10\" text-anchor=\"end\">0</text>";
  out += "<text x=\"" + coord((Frame::kLeft + Frame::kWidth) / 2) + "\" y=\"" +
         coord(Frame::kHeight - 8) + "\" font-size=\"11\" text-anchor=\"middle\">" +
         xml_escape(x_label) + "</text>";
  out += "<text x=\"12\" y=\"" + coord(Frame::kTop + 60) +
         "\" font-size=\"11\" transform=\"rotate(-90 12 " + coord(Frame::kTop + 60) + ")\">" +
         xml_escape(y_label) + "</text>";
  return out;
}

std::string series_svg(const std::string& param, const Series& s,
                       const std::vector<MarginCell>& cells,
                       const std::vector<MarginResult>& results) {
  const Frame f = frame_of(s, cells, results);
  const bool nanos = harness::margin::unit_of(s.kind) == harness::margin::Unit::kNanos;
  const std::string unit = nanos ? "s" : "ppm";
  const std::string x_label = param + (param == "drift-factor" ? "" : " (s)");
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"360\" height=\"220\">";
  out += axes_svg(f, x_label, "margin (" + unit + ")");
  std::string line;
  for (const size_t i : s.cells) {
    if (!results[i].theory) continue;
    line += (line.empty() ? "" : " ") + coord(f.px(cells[i].vary_x)) + "," +
            coord(f.py(plotted(s.kind, *results[i].theory)));
  }
  if (!line.empty()) {
    out += "<polyline points=\"" + line + "\" fill=\"none\" stroke=\"#1f5fbf\"/>";
  }
  for (const size_t i : s.cells) {
    const MarginResult& m = results[i];
    if (!m.above || m.outcome != Bisection::Outcome::kFound) continue;
    out += "<circle cx=\"" + coord(f.px(cells[i].vary_x)) + "\" cy=\"" +
           coord(f.py(plotted(s.kind, m.above->size))) + "\" r=\"3.5\" fill=\"#c0392b\"><title>" +
           xml_escape(cells[i].vary_value) + ": " +
           xml_escape(harness::margin::format_size(s.kind, m.above->size)) + "</title></circle>";
  }
  return out + "</svg>";
}

}  // namespace

nlohmann::ordered_json vary_json(const std::string& param, const std::vector<MarginCell>& cells,
                                 const std::vector<MarginResult>& results) {
  const std::vector<Series> all = series_of(cells, results);
  if (all.empty()) return nullptr;
  nlohmann::ordered_json j;
  j["param"] = param;
  j["series"] = nlohmann::ordered_json::array();
  for (const Series& s : all) {
    nlohmann::ordered_json one;
    one["algorithm"] = s.algorithm;
    one["fault"] = to_string(s.kind);
    one["points"] = nlohmann::ordered_json::array();
    for (const size_t i : s.cells) {
      const MarginResult& m = results[i];
      nlohmann::ordered_json p;
      p["value"] = cells[i].vary_value;
      p["x"] = cells[i].vary_x;
      p["outcome"] = m.outcome == Bisection::Outcome::kFound             ? "found"
                     : m.outcome == Bisection::Outcome::kBreaksAtAnySize ? "breaks-at-any-size"
                                                                         : "never-breaks";
      p["margin" + unit_suffix(s.kind)] = m.above && m.outcome == Bisection::Outcome::kFound
                                              ? nlohmann::ordered_json(m.above->size)
                                              : nlohmann::ordered_json(nullptr);
      p["theory" + unit_suffix(s.kind)] =
          m.theory ? nlohmann::ordered_json(*m.theory) : nlohmann::ordered_json(nullptr);
      one["points"].push_back(p);
    }
    j["series"].push_back(one);
  }
  return j;
}

std::string vary_markdown(const std::string& param, const std::vector<MarginCell>& cells,
                          const std::vector<MarginResult>& results) {
  const std::vector<Series> all = series_of(cells, results);
  if (all.empty()) return "";
  std::string out = "\n## How the margin moves with " + param + "\n\n";
  for (const Series& s : all) {
    out += "- " + s.algorithm + " " + to_string(s.kind) + ":";
    for (size_t k = 0; k < s.cells.size(); ++k) {
      const size_t i = s.cells[k];
      const MarginResult& m = results[i];
      out += std::string(k == 0 ? " " : "; ") + cells[i].vary_value + " → " +
             (m.above && m.outcome == Bisection::Outcome::kFound
                  ? harness::margin::format_size(s.kind, m.above->size)
                  : std::string(m.outcome == Bisection::Outcome::kNeverBreaks ? "never" : "any")) +
             " (theory " +
             (m.theory ? harness::margin::format_size(s.kind, *m.theory) : std::string("-")) + ")";
    }
    out += "\n";
  }
  return out;
}

std::string vary_html(const std::string& param, const std::vector<MarginCell>& cells,
                      const std::vector<MarginResult>& results) {
  const std::vector<Series> all = series_of(cells, results);
  if (all.empty()) return "";
  std::string out = "<h2>How the margin moves with " + xml_escape(param) +
                    "</h2>\n<p>Red dots: the margin measured at each value; blue line: "
                    "theory there.</p>\n<div>\n";
  for (const Series& s : all) {
    out += "<figure style=\"display:inline-block\"><figcaption>" + xml_escape(s.algorithm) + " " +
           xml_escape(to_string(s.kind)) + "</figcaption>" + series_svg(param, s, cells, results) +
           "</figure>\n";
  }
  return out + "</div>\n";
}

}  // namespace locksim::reports
