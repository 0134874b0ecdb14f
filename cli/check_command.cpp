#include "cli/check_command.h"

#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "env/parse.h"
#include "checkers/knossos.h"
#include "checkers/linearizability.h"
#include "checkers/linearizability_report.h"
#include "history/edn_history.h"

namespace locksim::cli {

namespace {

constexpr int kExitValid = 0;
constexpr int kExitInvalid = 1;
constexpr int kExitDisagreement = 3;

using checkers::LinearizabilityVerdict;
using checkers::Verdict;

checkers::KnossosOptions knossos_options(const KnossosFlags& f) {
  checkers::KnossosOptions o;
  o.command = f.command;
  o.time_limit = parse_duration(f.time_limit, "--knossos-time-limit");
  if (o.time_limit <= Duration::zero()) {
    throw ConfigError("--knossos-time-limit: expected a positive duration, got '" + f.time_limit +
                      "'");
  }
  // java's -Xmx syntax, checked here so a typo is a one-line error, not a JVM crash.
  const std::string& h = f.heap;
  const bool digits = h.size() >= 2 && h.find_first_not_of("0123456789") == h.size() - 1 &&
                      std::string("kKmMgG").find(h.back()) != std::string::npos;
  if (!digits || h[0] == '0') {
    throw ConfigError("--knossos-heap: expected a JVM heap size such as 512m or 4g, got '" + h +
                      "'");
  }
  o.heap = h;
  return o;
}

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
checkers::KnossosReport ask_knossos(const std::vector<history::Op>& ops, const KnossosFlags& flags) {
  const checkers::KnossosOptions options = knossos_options(flags);
  TempDir dir;
  const std::string file = (dir.path() / "history.edn").string();
  {
    std::ofstream out(file, std::ios::binary);
    out << checkers::knossos_edn(ops);
    if (!out) throw std::runtime_error("cannot write " + file);
  }
  const checkers::KnossosRun run = checkers::run_knossos({file}, options);
  checkers::KnossosReport r;
  r.verdict = run.verdicts.front();
  r.seconds = run.seconds;
  r.peak_rss_bytes = run.peak_rss_bytes;
  return r;
}

int64_t own_peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;
}

std::string seconds_text(double s) {
  if (s < 1e-3) return fmt::format("{:.0f} us", s * 1e6);
  return s < 1 ? fmt::format("{:.1f} ms", s * 1e3) : fmt::format("{:.2f} s", s);
}

const char* model_noun(checkers::MutexModel m) {
  return m == checkers::MutexModel::kMutex ? "a mutex" : "an owner-mutex";
}

// The side-by-side table: checker, model, verdict, time, memory.
std::string table(const std::vector<std::array<std::string, 5>>& rows) {
  std::string out = fmt::format("  {:<10} {:<12} {:<24} {:>10}  {}\n", "checker", "model",
                                "verdict", "time", "memory");
  for (const auto& r : rows) {
    out += fmt::format("  {:<10} {:<12} {:<24} {:>10}  {}\n", r[0], r[1], r[2], r[3], r[4]);
  }
  return out;
}

std::string headline(const checkers::LinearizabilityVerdict& v, const std::string& path,
                     const history::EdnHistory& h) {
  const std::string counts =
      fmt::format("{} client ops{}", v.client_ops,
                  h.skipped_ops > 0 ? fmt::format(", {} nemesis ops skipped", h.skipped_ops) : "");
  if (v.kind == checkers::Verdict::Kind::kValid) {
    return fmt::format("VALID: {} linearizes as {} ({})\n", path, model_noun(v.model), counts);
  }
  return fmt::format("INVALID: {} is not linearizable as {} ({})\n  {}\n", path,
                     model_noun(v.model), counts, v.explanation);
}

}  // namespace

void add_knossos_options(CLI::App* command, KnossosFlags& flags) {
  command->add_option("--knossos", flags.command,
                      "also check with Knossos: the command to run (e.g. "
                      "../shared/tools/knossos/knossos.sh); see README");
  command->add_option("--knossos-time-limit", flags.time_limit,
                      "wall-clock limit for Knossos (default 60s); past it: unknown");
  command->add_option("--knossos-heap", flags.heap, "Knossos's JVM heap (default 4g)");
}

CLI::App* add_check_command(CLI::App& app, CheckFlags& flags) {
  CLI::App* check = app.add_subcommand(
      "check", "check a Jepsen EDN history of lock ops for linearizability (and with Knossos)");
  check->add_option("history", flags.history, "the history, EDN: op maps, or one vector of them")
      ->required();
  check->add_option("--model", flags.model,
                    "mutex (Knossos's model) or owner-mutex (only the holder may release)");
  check->add_flag("--quiet", flags.quiet, "print nothing; rely on the exit code");
  add_knossos_options(check, flags.knossos);
  return check;
}

int run_check_command(const CheckFlags& flags) {
  const std::optional<checkers::MutexModel> model = checkers::mutex_model_from(flags.model);
  if (!model) {
    throw ConfigError("--model: expected one of mutex, owner-mutex, got '" + flags.model + "'");
  }
  if (!flags.knossos.command.empty()) (void)knossos_options(flags.knossos);  // bad flags first
  const history::EdnHistory h = history::load_edn_history(flags.history);
  if (const auto broken = checkers::find_rule_break(h.ops)) {
    throw ConfigError(
        fmt::format("{}:{}: op index {}: {} (Jepsen's history rules; Knossos "
                    "rejects such a history too)",
                    flags.history, h.lines[broken->position], broken->index, broken->rule));
  }
  const auto start = std::chrono::steady_clock::now();
  const checkers::LinearizabilityVerdict v = checkers::check_linearizable(h.ops, *model);
  const double builtin_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<std::array<std::string, 5>> rows = {
      {"built-in", to_string(*model), to_string(v.kind), seconds_text(builtin_s),
       checkers::format_bytes(own_peak_rss_bytes()) + " (locksim)"}};

  checkers::LinearizabilityReport report;
  if (!flags.knossos.command.empty()) {
    // Knossos knows only `mutex`: compare it with the built-in mutex verdict.
    report.builtin = *model == checkers::MutexModel::kMutex
                         ? v
                         : checkers::check_linearizable(h.ops, checkers::MutexModel::kMutex);
    if (*model != checkers::MutexModel::kMutex) {
      rows.push_back({"built-in", "mutex", to_string(report.builtin.kind), "", ""});
    }
    report.knossos = ask_knossos(h.ops, flags.knossos);
    const checkers::KnossosReport& k = *report.knossos;
    rows.push_back({"Knossos", "mutex", checkers::knossos_verdict_text(k.verdict),
                    seconds_text(k.seconds), checkers::format_bytes(k.peak_rss_bytes) + " (JVM)"});
  }
  const bool disagree = checkers::knossos_disagrees(report);
  if (!flags.quiet) {
    std::string out = disagree ? checkers::knossos_disagreement_text(report) + "\n" : "";
    out += headline(v, flags.history, h) + table(rows);
    std::cout << out;
  }
  if (disagree) return kExitDisagreement;
  return v.kind == checkers::Verdict::Kind::kValid ? kExitValid : kExitInvalid;
}

void check_run_with_knossos(harness::RunResult& result, const KnossosFlags& flags) {
  if (flags.command.empty()) return;
  result.linearizability.knossos = ask_knossos(result.history.ops, flags);
}

}  // namespace locksim::cli
