#include "cli/check_command.h"

#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "checkers/checker_list.h"
#include "checkers/knossos.h"
#include "checkers/linearizability.h"
#include "checkers/linearizability_report.h"
#include "cli/exit_codes.h"
#include "cli/next_step.h"
#include "env/parse.h"
#include "history/edn_history.h"
#include "history/history_file.h"

namespace locksim::cli {

namespace {

using checkers::LinearizabilityVerdict;
using checkers::Verdict;

// What --knossos-time-limit and --knossos-heap are when not given (the help
// says the same).
constexpr const char* kKnossosTimeLimitDefault = "60s";
constexpr const char* kKnossosHeapDefault = "4g";

checkers::KnossosOptions parse_knossos_flags(const KnossosFlags& f) {
  checkers::KnossosOptions o;
  o.command = f.command;
  const std::string limit = f.time_limit.empty() ? kKnossosTimeLimitDefault : f.time_limit;
  o.time_limit = parse_duration(limit, "--knossos-time-limit");
  if (o.time_limit <= Duration::zero()) {
    throw ConfigError("--knossos-time-limit: expected a positive duration, got '" + limit + "'");
  }
  // java's -Xmx syntax, checked here so a typo is a one-line error, not a JVM crash.
  const std::string h = f.heap.empty() ? kKnossosHeapDefault : f.heap;
  const bool digits = h.size() >= 2 && h.find_first_not_of("0123456789") == h.size() - 1 &&
                      std::string("kKmMgG").find(h.back()) != std::string::npos;
  if (!digits || h[0] == '0') {
    throw ConfigError("--knossos-heap: expected a JVM heap size such as 512m or 4g, got '" + h +
                      "'");
  }
  o.heap = h;
  return o;
}

// The program `command` runs (sh runs it as `exec COMMAND "$@"`): its first
// word past any NAME=value, found as a path or on PATH. A command that
// starts with a quote or a shell construct is left to the shell.
void check_knossos_program(const std::string& command) {
  std::istringstream words(command);
  std::string program;
  while (words >> program && program.find('=') != std::string::npos) {
  }
  if (program.empty() || program.find_first_of("'\"\\$`(") != std::string::npos) return;
  const auto runnable = [](const std::string& path) {
    return access(path.c_str(), X_OK) == 0 && !std::filesystem::is_directory(path);
  };
  if (program.find('/') != std::string::npos) {
    if (!runnable(program)) {
      throw ConfigError("--knossos: expected a command that runs Knossos; '" + program +
                        "' is not an executable file (docs/how-to/knossos.md)");
    }
    return;
  }
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (runnable((std::filesystem::path(dir.empty() ? "." : dir) / program).string())) return;
  }
  throw ConfigError("--knossos: expected a command that runs Knossos; '" + program +
                    "' is not found on PATH (docs/how-to/knossos.md)");
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

// The side-by-side table: checker, model, verdict, time, memory. The verdict
// column is as wide as its longest entry ("unknown (command not found: ...)"),
// so the columns after it stay aligned.
std::string table(const std::vector<std::array<std::string, 5>>& rows) {
  size_t verdict_width = 7;  // "verdict"
  for (const auto& r : rows) verdict_width = std::max(verdict_width, r[2].size());
  const auto line = [verdict_width](const std::array<std::string, 5>& r) {
    return fmt::format("  {:<10} {:<12} {:<{}} {:>10}  {}\n", r[0], r[1], r[2], verdict_width, r[3],
                       r[4]);
  };
  std::string out = line({"checker", "model", "verdict", "time", "memory"});
  for (const auto& r : rows) out += line(r);
  return out;
}

std::string headline(const checkers::LinearizabilityVerdict& v, const std::string& path,
                     const history::EdnHistory& h) {
  const std::string counts = fmt::format(
      "{} client {}{}", v.client_ops, v.client_ops == 1 ? "op" : "ops",
      h.skipped_ops > 0
          ? fmt::format(", {} nemesis {} skipped", h.skipped_ops, h.skipped_ops == 1 ? "op" : "ops")
          : "");
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
                      "a knossos.sh wrapper); see docs/how-to/knossos.md");
  command->add_option("--knossos-time-limit", flags.time_limit,
                      std::string("wall-clock limit for Knossos (default ") +
                          kKnossosTimeLimitDefault + "); past it: unknown");
  command->add_option("--knossos-heap", flags.heap,
                      std::string("Knossos's JVM heap (default ") + kKnossosHeapDefault + ")");
}

CLI::App* add_check_command(CLI::App& app, CheckFlags& flags) {
  CLI::App* check = app.add_subcommand(
      "check", "check a history of lock ops for linearizability (and with Knossos)");
  check
      ->add_option("history", flags.history,
                   "the history: EDN (op maps, or one vector of them) or locksim's JSON lines")
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
  const std::optional<checkers::KnossosOptions> knossos = knossos_options(flags.knossos);
  history::EdnHistory h = history::load_history_file(flags.history);
  if (h.ops.empty()) {
    // Nothing to judge is not a valid history: a wrong file, or a run that
    // recorded nothing, must not pass a gate.
    throw ConfigError(fmt::format(
        "{}: no client ops ({}): expected a history of :acquire and :release ops", flags.history,
        h.total_ops == 0 ? "the file holds no ops"
                         : fmt::format("{} non-client {} skipped", h.skipped_ops,
                                       h.skipped_ops == 1 ? "op" : "ops")));
  }
  if (const auto broken = checkers::find_rule_break(h.ops)) {
    throw ConfigError(
        fmt::format("{}:{}: op index {}: {} (Jepsen's history rules; Knossos "
                    "rejects such a history too)",
                    flags.history, h.lines[broken->position], broken->index, broken->rule));
  }
  // A file has no ground truth: the history-only checkers of the one list
  // judge it, and decide. Knossos referees afterwards, so the table can show
  // the built-in checker's own time.
  // Moved, not copied: a 1 M-op history's ops are 144 MB. The lines named
  // only a rule break, so their memory goes back before the checkers run.
  history::History history;
  history.ops = std::move(h.ops);
  std::vector<int>().swap(h.lines);
  checkers::Recorded recorded;
  recorded.history = &history;
  recorded.truth = false;
  recorded.model = *model;
  const auto start = std::chrono::steady_clock::now();
  checkers::Verdicts verdicts = checkers::check_recorded(recorded);
  const double builtin_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const checkers::LinearizabilityVerdict& v = verdicts.linearizability.builtin;
  std::vector<std::array<std::string, 5>> rows = {
      {"built-in", to_string(*model), to_string(v.kind), seconds_text(builtin_s),
       checkers::format_bytes(own_peak_rss_bytes()) + " (locksim)"}};
  if (knossos) {
    const checkers::LinearizabilityVerdict refereed =
        checkers::referee_with_knossos(history.ops, *knossos, v, verdicts);
    if (*model != checkers::MutexModel::kMutex) {
      rows.push_back({"built-in", "mutex", to_string(refereed.kind), "", ""});
    }
    const checkers::KnossosReport& k = *verdicts.linearizability.knossos;
    // A command that never ran started no JVM: no time or memory to show.
    rows.push_back({"Knossos", "mutex", checkers::knossos_verdict_text(k.verdict),
                    k.started ? seconds_text(k.seconds) : "-",
                    k.started ? checkers::format_bytes(k.peak_rss_bytes) + " (Knossos)" : "-"});
  }
  const checkers::Check* disagree = checkers::disagreement(verdicts.checks);
  if (!flags.quiet) {
    std::string out = disagree != nullptr ? disagree->explanation + "\n" : "";
    out += headline(v, flags.history, h) + table(rows);
    out += next_after_check(checkers::merged(verdicts.checks), flags.history, knossos.has_value());
    std::cout << out;
  }
  return exit_code(verdicts.checks);
}

std::optional<checkers::KnossosOptions> knossos_options(const KnossosFlags& f) {
  if (f.command.empty()) {
    for (const auto& [flag, value] :
         {std::pair{"--knossos-time-limit", &f.time_limit}, std::pair{"--knossos-heap", &f.heap}}) {
      if (!value->empty()) {
        throw ConfigError(std::string(flag) + ": only with --knossos CMD, which it is for; got '" +
                          *value + "' without it");
      }
    }
    return std::nullopt;
  }
  checkers::KnossosOptions o = parse_knossos_flags(f);
  check_knossos_program(f.command);
  return o;
}

}  // namespace locksim::cli
