// The timeline's lanes per lock server and the story's marks
// (reports/timeline_svg.h): a student sees the key expire on the server
// under the paused holder, at the instant the story says.
#include <optional>
#include <string>

#include "checkers/explain_records.h"
#include "env/assert.h"
#include "history/history.h"
#include "reports/timeline_frame.h"

namespace locksim::reports {

namespace {

using K = checkers::ServerLock::Kind;

// Who a stored token belongs to, for a bar's label, as explain names it.
std::string owner_of(const history::History& h, const std::string& token) {
  const std::optional<int> client = checkers::records::client_of_token(h, token);
  return client ? history::client_label(*client) : "?";
}

// One stretch [from, to) of one server's state.
void draw_stretch(const history::History& h, const checkers::ServerLock& s, int64_t from,
                  int64_t to, int lane, const Frame& f, std::string& out) {
  if (s.kind == K::kAbsent && !s.serving) return;
  const int y = f.lane_y(lane);
  const std::string role = s.serving ? " (its answer counts)" : " (a replica or follower)";
  const std::string span = " [" + fmt_s(from) + ", " + fmt_s(to) + ")";
  const std::string data =
      " data-server=\"" + xml_escape(s.server) + "\" data-state=\"" + to_string(s.kind) + "\"";
  const std::string edge = s.serving ? " stroke=\"#000\" stroke-width=\"1\"" : "";
  switch (s.kind) {
    case K::kHeld: {
      const std::string who = owner_of(h, s.holder);
      out += rect("server-lock", f.x(from), f.x(to), y + 5, 16, "#9ecae1",
                  s.server + " keeps the lock for " + who + " (" + s.holder + ")" + role + span,
                  data + edge);
      if (f.x(to) - f.x(from) >= 18) {
        out += "<text x=\"" + std::to_string(f.x(from) + 2) + "\" y=\"" + std::to_string(y + 17) +
               "\" font-size=\"10\">" + xml_escape(who) + "</text>\n";
      }
      return;
    }
    case K::kExpired:
      out += rect(
          "server-lock", f.x(from), f.x(to), y + 5, 16, "#fdae6b",
          s.server + " still stores " + owner_of(h, s.holder) + "'s lock, expired" + role + span,
          data + edge);
      return;
    case K::kDown:
      out += rect("server-lock", f.x(from), f.x(to), y + 5, 16, "#bbb",
                  s.server + " is down or frozen" + span, data);
      return;
    case K::kAbsent:
      out += rect("server-lock", f.x(from), f.x(to), y + 11, 4, "#ddd",
                  s.server + " has no lock" + role + span, data + edge);
      return;
  }
}

}  // namespace

void draw_server_lanes(const harness::RunResult& r, const Frame& f, std::string& out) {
  const checkers::LockTrace& t = r.lock_trace;
  if (!t.supported) return;
  LOCKSIM_ASSERT(static_cast<int>(t.initial.size()) == f.servers());
  for (int i = 0; i < f.servers(); ++i) {
    const int lane = f.clients + 1 + i;
    checkers::ServerLock state = t.initial[static_cast<size_t>(i)];
    int64_t since = 0;
    for (const checkers::LockChange& c : t.changes) {
      // A fair lock's queue changing alone changes nothing the lane draws.
      if (c.after.server != state.server || checkers::same_lock(c.after, state)) continue;
      draw_stretch(r.history, state, since, c.at.ns, lane, f, out);
      state = c.after;
      since = c.at.ns;
    }
    draw_stretch(r.history, state, since, f.run_ns, lane, f, out);
  }
}

void draw_captions(const checkers::Story& story, const Frame& f, std::string& out) {
  for (size_t i = 0; i < story.steps.size(); ++i) {
    const checkers::StoryStep& s = story.steps[i];
    const int x = f.x(s.at.ns);
    const std::string n = std::to_string(i + 1);
    out += "<g class=\"caption\" data-step=\"" + n + "\"><line x1=\"" + std::to_string(x) +
           "\" y1=\"" + std::to_string(kTop) + "\" x2=\"" + std::to_string(x) + "\" y2=\"" +
           std::to_string(f.height() - 8) +
           "\" stroke=\"#6a3d9a\" stroke-dasharray=\"3,3\"/><text x=\"" + std::to_string(x + 2) +
           "\" y=\"" + std::to_string(kTop + 8) + "\" font-size=\"10\" fill=\"#6a3d9a\">" + n +
           "</text><title>" + xml_escape(n + ". " + fmt_s(s.at.ns) + " " + s.text) +
           "</title></g>\n";
  }
}

std::string story_list(const checkers::Story& story) {
  if (story.steps.empty()) return "";
  std::string out = "<h2>Why: " + xml_escape(story.finding) + ", because " +
                    xml_escape(checkers::mechanism_words(story.mechanism)) +
                    "</h2>\n<ol class=\"story\">\n";
  for (const checkers::StoryStep& s : story.steps)
    out += "<li>" + xml_escape(fmt_s(s.at.ns)) + " " + xml_escape(s.text) + "</li>\n";
  out += "</ol>\n<p>mechanism: <code>" + std::string(checkers::mechanism_id(story.mechanism)) +
         "</code>";
  if (!story.prevention.empty())
    out += "; would have prevented it: " + xml_escape(story.prevention);
  return out + "</p>\n";
}

}  // namespace locksim::reports
