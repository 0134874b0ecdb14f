// The geometry the timeline's parts share (reports/timeline_svg.h): lanes,
// time to x, and the one SVG shape they all draw with. Internal to reports/.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "checkers/explain.h"
#include "env/parse.h"
#include "harness/run_result.h"

namespace locksim::reports {

inline constexpr int kLabelWidth = 70;   // px: lane names
inline constexpr int kPlotWidth = 1000;  // px: the run's length
inline constexpr int kLaneHeight = 26;   // px
inline constexpr int kTop = 22;          // px: the time axis
inline constexpr int kRightMargin = 30;  // px: room for half the last axis label

// Geometry of one drawing: lanes by client then by server, time to x.
struct Frame {
  int64_t run_ns = 1;
  int clients = 0;
  std::vector<std::string> server_names;  // lock servers, from the lock trace

  int servers() const { return static_cast<int>(server_names.size()); }
  int x(int64_t t_ns) const {
    const int64_t clamped = std::clamp<int64_t>(t_ns, 0, run_ns);
    return kLabelWidth + static_cast<int>(clamped * kPlotWidth / run_ns);
  }
  // Lane 0 is the nemesis; client c is lane c + 1; server s is lane clients + 1 + s.
  int lane_y(int lane) const { return kTop + lane * kLaneHeight; }
  int height() const { return lane_y(clients + servers() + 1) + 8; }
};

inline std::string fmt_s(int64_t ns) {
  return format_seconds(ns);
}

// Escapes & < > " ' (reports/timeline_svg.h).
std::string xml_escape(std::string_view text);

inline std::string rect(const std::string& cls, int x0, int x1, int y, int h,
                        const std::string& fill, const std::string& title,
                        const std::string& extra = "") {
  const int w = std::max(1, x1 - x0);
  return "<rect class=\"" + cls + "\" x=\"" + std::to_string(x0) + "\" y=\"" + std::to_string(y) +
         "\" width=\"" + std::to_string(w) + "\" height=\"" + std::to_string(h) + "\" fill=\"" +
         fill + "\"" + extra + "><title>" + xml_escape(title) + "</title></rect>\n";
}

// reports/timeline_lanes.cpp: the server lanes, the story's marks, and the
// story as a numbered list for the page below the drawing.
void draw_server_lanes(const harness::RunResult& r, const Frame& f, std::string& out);
void draw_captions(const checkers::Story& story, const Frame& f, std::string& out);
std::string story_list(const checkers::Story& story);

}  // namespace locksim::reports
