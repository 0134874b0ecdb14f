#include "reports/timeline_svg.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "checkers/mutex_checker.h"
#include "env/assert.h"
#include "env/parse.h"
#include "harness/explain_run.h"
#include "reports/timeline_frame.h"

namespace locksim::reports {

namespace {

using history::HeldInterval;
using history::Op;
using history::OpF;
using history::OpType;

int client_count(const harness::RunResult& r) {
  int n = 0;
  for (const history::Op& op : r.history.ops) {
    if (history::is_client_op(op)) n = std::max(n, op.client + 1);
  }
  for (const history::HeldInterval& h : r.history.held) n = std::max(n, h.client + 1);
  return std::max(n, 1);
}

void draw_lanes(const Frame& f, std::string& out) {
  out += "<g class=\"axis\">\n";
  for (int s = 0; s <= 10; ++s) {
    const int64_t t = f.run_ns * s / 10;
    const int x = f.x(t);
    out += "<line x1=\"" + std::to_string(x) + "\" y1=\"" + std::to_string(kTop - 4) + "\" x2=\"" +
           std::to_string(x) + "\" y2=\"" + std::to_string(f.height() - 8) +
           "\" stroke=\"#ddd\"/>\n<text x=\"" + std::to_string(x) + "\" y=\"12\" font-size=\"10\"" +
           " text-anchor=\"middle\">" + xml_escape(fmt_s(t)) + "</text>\n";
  }
  out += "</g>\n";
  for (int lane = 0; lane <= f.clients + f.servers(); ++lane) {
    const std::string name = lane == 0 ? std::string("nemesis")
                             : lane <= f.clients
                                 ? history::client_label(lane - 1)
                                 : f.server_names[static_cast<size_t>(lane - f.clients - 1)];
    out += "<g class=\"lane\" data-lane=\"" + name + "\"><text x=\"4\" y=\"" +
           std::to_string(f.lane_y(lane) + 17) + "\" font-size=\"12\">" + name + "</text></g>\n";
  }
}

void draw_held(const harness::RunResult& r, const Frame& f, std::string& out) {
  for (const history::HeldInterval& h : r.history.held) {
    LOCKSIM_ASSERT_MSG(h.start <= h.end && h.client < f.clients, "a held interval fits its lane");
    const std::string who = history::client_label(h.client);
    out += rect("held", f.x(h.start.ns), f.x(h.end.ns), f.lane_y(h.client + 1) + 5, 16, "#4a7fb5",
                who + " held the lock [" + fmt_s(h.start.ns) + ", " + fmt_s(h.end.ns) +
                    ") as process " + std::to_string(h.process) + ", acquire op " +
                    std::to_string(h.acquire_index) + ", ended by " + to_string(h.end_reason),
                " data-client=\"" + who + "\"");
  }
}

void draw_overlaps(const harness::RunResult& r, const Frame& f, std::string& out) {
  for (const checkers::Overlap& o : r.mutex.overlaps) {
    LOCKSIM_ASSERT(o.window_start <= o.window_end);
    const std::string a = history::client_label(o.a.client);
    const std::string b = history::client_label(o.b.client);
    const std::string title = "OVERLAP: " + a + " and " + b + " both held the lock in [" +
                              fmt_s(o.window_start.ns) + ", " + fmt_s(o.window_end.ns) + ")";
    const std::string data = " data-a=\"" + a + "\" data-b=\"" + b + "\"";
    for (const int client : {o.a.client, o.b.client}) {
      out += rect("overlap", f.x(o.window_start.ns), f.x(o.window_end.ns), f.lane_y(client + 1) + 2,
                  22, "#d62728", title, data + " fill-opacity=\"0.85\"");
    }
  }
}

// The length a fault op names ("pause [c1 5s]", "partition [a b 5s]",
// "partition [a->b 5s]", "crash [n 5s]", "delay [a b 5s 1s]", "loss [a b 0.2
// 5s]"), or none: an untimed fault, an end op, an instant one.
std::optional<int64_t> named_length_ns(const Op& op) {
  const std::vector<std::string>& v = op.value;
  size_t at = v.size();  // past the end: none
  if (op.f == OpF::kPause || op.f == OpF::kCrash || op.f == OpF::kHang) at = 1;
  if (op.f == OpF::kPartition) at = !v.empty() && v[0].find("->") != std::string::npos ? 1 : 2;
  if (op.f == OpF::kDelay) at = 2;
  if (op.f == OpF::kLoss) at = 3;
  if (at >= v.size() || (op.f == OpF::kDelay && v.size() < 4)) return std::nullopt;
  try {
    return parse_duration(v[at], "fault").ns;
  } catch (const ConfigError&) {
    return std::nullopt;  // a history from elsewhere: drawn as an instant
  }
}

// One fault where it really acted, [from, to): a timed fault for its length,
// cut short by a heal of every link (a partition); an untimed partition
// until such a heal, an untimed crash until its node restarts; else to the
// end of the run. Instants (drift, jump, skip, a heal of every link, a loss
// rate set for good) have from == to.
struct FaultBand {
  int64_t from_ns = 0;
  int64_t to_ns = 0;
  std::string what;
  std::vector<std::string> targets;
  int slot = 0;  // its row in the nemesis lane: overlapping bands get their own
};

int64_t band_end_ns(const harness::RunResult& r, size_t i, int64_t run_ns) {
  const Op& op = r.history.ops[i];
  const std::optional<int64_t> length = named_length_ns(op);
  int64_t end = length ? std::min(run_ns, op.time_ns + *length) : run_ns;
  if (op.f != OpF::kPartition && (length || op.f != OpF::kCrash)) return end;
  for (size_t j = i + 1; j < r.history.ops.size(); ++j) {
    const Op& later = r.history.ops[j];
    if (later.time_ns >= end) break;
    const bool heal_all = later.f == OpF::kHeal && later.value.empty();
    const bool restart = op.f == OpF::kCrash && later.f == OpF::kRestart && !later.value.empty() &&
                         later.value[0] == op.value.front();
    if (heal_all || restart) return later.time_ns;
  }
  return end;
}

std::vector<FaultBand> fault_bands(const harness::RunResult& r, int64_t run_ns) {
  std::vector<FaultBand> bands;
  for (size_t i = 0; i < r.history.ops.size(); ++i) {
    const Op& op = r.history.ops[i];
    if (history::is_client_op(op)) continue;
    // Ends are drawn by their fault's band: resume, restart, the heal of one
    // partition, a delay's end.
    const bool end_op = op.f == OpF::kResume || op.f == OpF::kRestart || op.f == OpF::kUnhang ||
                        (op.f == OpF::kHeal && !op.value.empty()) ||
                        (op.f == OpF::kDelay && op.value.size() < 4);
    if (end_op) continue;
    const bool lasting = op.f == OpF::kPause || op.f == OpF::kCrash || op.f == OpF::kHang ||
                         op.f == OpF::kPartition || named_length_ns(op).has_value();
    FaultBand b{op.time_ns, lasting ? band_end_ns(r, i, run_ns) : op.time_ns,
                fmt_s(op.time_ns) + ": " + history::describe_nemesis_op(op), op.value};
    bands.push_back(std::move(b));
  }
  // The lowest row free at each band's start (bands come in start order).
  std::vector<int64_t> row_free_at_ns;
  for (FaultBand& b : bands) {
    size_t row = 0;
    while (row < row_free_at_ns.size() && row_free_at_ns[row] > b.from_ns) ++row;
    if (row == row_free_at_ns.size()) row_free_at_ns.push_back(0);
    row_free_at_ns[row] = std::max(b.to_ns, b.from_ns + 1);
    b.slot = static_cast<int>(row);
  }
  return bands;
}

// Faults as bands in the nemesis lane, one per fault (stacked where they
// overlap), and shaded on the lanes of the clients they name.
void draw_faults(const harness::RunResult& r, const Frame& f, std::string& out) {
  const std::vector<FaultBand> bands = fault_bands(r, f.run_ns);
  int rows = 1;
  for (const FaultBand& b : bands) rows = std::max(rows, b.slot + 1);
  const int row_height = std::max(1, 18 / rows);
  for (const FaultBand& b : bands) {
    LOCKSIM_ASSERT(b.from_ns <= b.to_ns && b.slot < rows);
    out += rect("fault", f.x(b.from_ns), f.x(b.to_ns), f.lane_y(0) + 4 + b.slot * row_height,
                row_height, "#ff9f1c", b.what, " fill-opacity=\"0.8\"");
    for (int c = 0; c < f.clients; ++c) {
      const std::string label = history::client_label(c);
      for (std::string t : b.targets) {
        // "c1,c3", "redis-1" or one way "c1,c3->redis-1": names between commas.
        if (const size_t arrow = t.find("->"); arrow != std::string::npos) t.replace(arrow, 2, ",");
        if (("," + t + ",").find("," + label + ",") == std::string::npos) continue;
        out += rect("fault", f.x(b.from_ns), f.x(b.to_ns), f.lane_y(c + 1), kLaneHeight, "#ff9f1c",
                    b.what, " fill-opacity=\"0.25\"");
      }
    }
  }
}

void draw_ops(const harness::RunResult& r, const Frame& f, std::string& out) {
  for (const history::Op& op : r.history.ops) {
    if (!history::is_client_op(op)) continue;
    const char* colour = op.type == history::OpType::kInvoke ? "#888"
                         : op.type == history::OpType::kOk   ? "#2ca02c"
                         : op.type == history::OpType::kFail ? "#222"
                                                             : "#e377c2";
    const int x = f.x(op.time_ns);
    const int y = f.lane_y(op.client + 1);
    out += "<line class=\"op\" x1=\"" + std::to_string(x) + "\" y1=\"" + std::to_string(y + 1) +
           "\" x2=\"" + std::to_string(x) + "\" y2=\"" + std::to_string(y + 7) + "\" stroke=\"" +
           colour + "\" stroke-width=\"2\"><title>" +
           xml_escape("op " + std::to_string(op.index) + " process " + std::to_string(op.process) +
                      " :" + to_string(op.type) + " :" + to_string(op.f) + " at " +
                      fmt_s(op.time_ns) + (op.detail.empty() ? "" : " — " + op.detail)) +
           "</title></line>\n";
  }
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string timeline_svg(const harness::RunResult& r) {
  return timeline_svg(r, harness::explain_result(r));
}

std::string timeline_svg(const harness::RunResult& r, const checkers::Story& story) {
  Frame f;
  f.run_ns = std::max<int64_t>(1, r.history.run_length.ns);
  f.clients = client_count(r);
  for (const checkers::ServerLock& s : r.lock_trace.initial) f.server_names.push_back(s.server);
  LOCKSIM_ASSERT(f.clients >= 1 && f.run_ns >= 1);
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" width=\"" +
                    std::to_string(kLabelWidth + kPlotWidth + kRightMargin) + "\" height=\"" +
                    std::to_string(f.height()) + "\" data-lanes=\"" + std::to_string(f.clients) +
                    "\" font-family=\"sans-serif\">\n";
  draw_lanes(f, out);
  draw_faults(r, f, out);
  draw_held(r, f, out);
  draw_overlaps(r, f, out);
  draw_ops(r, f, out);
  draw_server_lanes(r, f, out);
  draw_captions(story, f, out);
  out += "</svg>\n";
  LOCKSIM_ASSERT_MSG(out.find("<svg") == 0, "one svg element");
  return out;
}

std::string timeline_page(const harness::RunResult& r) {
  const std::string finding = checkers::finding(r.checks);
  const checkers::Story story = harness::explain_result(r);
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>locksim: " +
         xml_escape(r.algorithm) + " seed " + std::to_string(r.seed) +
         "</title></head>\n<body style=\"font-family:sans-serif\">\n<h1>" +
         xml_escape(r.algorithm) + ", seed " + std::to_string(r.seed) + ": finding " +
         xml_escape(finding) + "</h1>\n<p>" + xml_escape(r.mutex.explanation) +
         "</p>\n<p>replay: <code>" + xml_escape(r.replay_command) + "</code></p>\n" +
         "<p>Bars: held intervals (ground truth). Red: two holders at once. Orange: faults. "
         "Ticks: ops (grey invoke, green ok, black fail, pink info). Server lanes: the lock as "
         "each "
         "server stores it (blue held, amber expired but stored, grey down; a bold edge: the "
         "server whose "
         "answer counts). Numbered marks: the story below. Hover for details.</p>\n" +
         timeline_svg(r, story) + story_list(story) + "</body></html>\n";
}

}  // namespace locksim::reports
