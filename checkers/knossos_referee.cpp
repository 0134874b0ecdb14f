// Knossos as the referee of the built-in linearizability checker: the same
// client ops, written to a private temporary EDN file, judged by Knossos's
// `mutex` model, and set beside the built-in mutex verdict in the check list.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "checkers/checker_list.h"
#include "checkers/knossos.h"
#include "env/assert.h"

namespace locksim::checkers {

namespace {

// A private directory for the file Knossos reads, removed when this goes.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "locksim-knossos-XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot create a temporary directory for Knossos");
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Knossos on exactly the client ops the built-in checker judged.
KnossosReport ask_knossos(const std::vector<history::Op>& ops, const KnossosOptions& options) {
  TempDir dir;
  const std::string file = (dir.path() / "history.edn").string();
  {
    std::ofstream out(file, std::ios::binary);
    out << knossos_edn(ops);
    if (!out) throw std::runtime_error("cannot write " + file);
  }
  const KnossosRun run = run_knossos({file}, options);
  LOCKSIM_ASSERT(run.verdicts.size() == 1);
  KnossosReport r;
  r.verdict = run.verdicts.front();
  r.seconds = run.seconds;
  r.peak_rss_bytes = run.peak_rss_bytes;
  // The shell's codes for a command it could not find (127) or run (126).
  r.started = run.exit_status != 127 && run.exit_status != 126;
  return r;
}

}  // namespace

LinearizabilityVerdict referee_with_knossos(const std::vector<history::Op>& ops,
                                            const KnossosOptions& options,
                                            const LinearizabilityVerdict& builtin,
                                            Verdicts& verdicts) {
  // Knossos knows only `mutex`: it referees the built-in mutex verdict, which
  // joins the list (deciding nothing) when the user asked for another model.
  LinearizabilityVerdict mutex = builtin;
  if (builtin.model != MutexModel::kMutex) {
    mutex = check_linearizable(ops, MutexModel::kMutex);
    verdicts.checks.push_back(
        check_of(mutex.checker, mutex.kind, Kind::kSafety, mutex.explanation, false));
  }
  LOCKSIM_ASSERT(mutex.model == MutexModel::kMutex);
  const KnossosReport report = ask_knossos(ops, options);
  verdicts.linearizability.knossos = report;
  const LinearizabilityReport pair{mutex, report};
  Check c = check_of("knossos", report.verdict.kind, Kind::kSafety,
                     knossos_disagrees(pair)
                         ? knossos_disagreement_text(pair)
                         : "Knossos (mutex model): " + knossos_verdict_text(report.verdict),
                     false);
  c.referees = mutex.checker;
  verdicts.checks.push_back(std::move(c));
  return mutex;
}

}  // namespace locksim::checkers
