#include "cli/next_step.h"

#include <filesystem>

#include "harness/settings.h"

namespace locksim::cli {

std::string next_after_run(const std::string& finding, const std::string& replay,
                           const std::string& html, const std::string& out) {
  if (finding == "none") return "";
  if (!html.empty()) return "next: open " + html + " in a browser to see it on a timeline\n";
  // The replay command reruns the same run byte for byte, so adding a flag to
  // it shows this very finding, not a similar one.
  const std::string look = replay + " --html timeline.html";
  if (!out.empty()) {
    return "next: " + look + " to see it on a timeline (the history is in " +
           (std::filesystem::path(out) / "history.jsonl").string() + ")\n";
  }
  return "next: " + look + " to see it on a timeline (--out DIR writes its history)\n";
}

std::string next_after_sweep(const std::string& out) {
  return "next: open " + (std::filesystem::path(out) / "matrix.html").string() +
         " in a browser: each red cell links its first failing seed's timeline\n";
}

std::string next_after_check(checkers::Validity validity, const std::string& history,
                             bool knossos_asked) {
  if (validity != checkers::Validity::kInvalid) return "";
  if (knossos_asked) {
    return "next: read " + history + " up to the op named above: the ops before it fit a lock\n";
  }
  return "next: locksim check " + harness::shell_quote(history) +
         " --knossos CMD to have Knossos referee the same history (docs/how-to/knossos.md)\n";
}

}  // namespace locksim::cli
