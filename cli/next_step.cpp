#include "cli/next_step.h"

#include <filesystem>

#include "env/assert.h"
#include "harness/settings.h"

namespace locksim::cli {

std::string next_after_run(const std::string& finding, const std::string& replay,
                           const std::string& html) {
  if (finding == "none") return "";
  // The replay command reruns the same run byte for byte, so adding a flag to
  // it shows this very finding, and `locksim shrink` takes the same flags.
  const std::string run_prefix = "locksim run ";
  LOCKSIM_ASSERT(replay.rfind(run_prefix, 0) == 0);
  const std::string shrink = "locksim shrink " + replay.substr(run_prefix.size()) +
                             " for the smallest run that fails the same way";
  if (!html.empty()) return "next: open " + html + " to see it on a timeline; " + shrink + "\n";
  return "next: " + replay + " --html timeline.html to see it on a timeline; " + shrink + "\n";
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
