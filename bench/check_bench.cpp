// `locksim check` of a big EDN history, the whole command as users run it
// (issue 26: 1 M ops in under 1 s of wall time and under 200 MB). The history
// is generated, never read from a checked-in file: a contended lock of 5
// clients, 1 % of completions :info, a nemesis op every 1,000 ops, written
// once in locksim's own EDN (history::to_edn, what `locksim run` writes).
// Run:
//   build/locksim_bench --benchmark_filter='CheckCommand|ParseEdnHistory'
//
// BM_CheckCommand runs the locksim binary beside this one on the file, so the
// time is the command's wall time, start-up and output included; its counters
// are the child's CPU time and peak RSS (wait4's rusage; bench_peak_MB is this
// process's own, which must stay below it, see HistoryFile). BM_ParseEdnHistory
// is the reading alone, in this process, in one piece and split over two
// threads, for the split between reading and checking.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bench/contended_history.h"
#include "history/edn_history.h"
#include "history/history.h"
#include "history/history_io.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;

// The generated history's EDN: {ops, violation at the end} -> text. Made once
// per shape; a 1 M-op history is about 80 MB of text.
const std::string& history_edn(int64_t ops, bool violate) {
  static std::map<std::pair<int64_t, bool>, std::string> made;
  auto [it, fresh] = made.try_emplace({ops, violate});
  if (fresh) {
    locksim::history::History h;
    h.ops = locksim::bench::with_nemesis(locksim::bench::contended_history(ops, 5, 0.01, violate),
                                         1000);
    it->second = locksim::history::to_edn(h);
  }
  return it->second;
}

// The history written to a file named by the shape, removed when the
// benchmark ends. Written from a forked child: the generator's ops and text
// (over 300 MB for 1 M ops) would raise this process's peak RSS, and Linux
// hands a spawned child's exec the larger of its parent's peak and its own,
// so BM_CheckCommand's peak would be this process's, not the command's.
struct HistoryFile {
  fs::path path;
  HistoryFile(int64_t ops, bool violate)
      : path(fs::temp_directory_path() / ("locksim-check-bench-" + std::to_string(getpid()) + "-" +
                                          std::to_string(ops) + (violate ? "-bad" : "") + ".edn")) {
    const pid_t child = fork();
    if (child == 0) {
      locksim::history::History h;
      h.ops = locksim::bench::with_nemesis(locksim::bench::contended_history(ops, 5, 0.01, violate),
                                           1000);
      std::ofstream(path, std::ios::binary) << locksim::history::to_edn(h);
      _exit(0);
    }
    int status = 0;
    if (child > 0) waitpid(child, &status, 0);
  }
  ~HistoryFile() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

int64_t own_peak_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// Runs `argv` with stdout and stderr to /dev/null; returns its exit code
// (-1 when it did not exit normally) and fills `usage`.
int run(const std::vector<std::string>& argv, rusage& usage) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  if (wait4(pid, &status, 0, &usage) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

double seconds(const timeval& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
}

void BM_CheckCommand(benchmark::State& state) {
  const fs::path locksim = fs::read_symlink("/proc/self/exe").parent_path() / "locksim";
  if (!fs::exists(locksim)) {
    state.SkipWithError("build the locksim target: it runs the binary beside this one");
    return;
  }
  const bool violate = state.range(1) != 0;
  const HistoryFile file(state.range(0), violate);
  double cpu_s = 0;
  int64_t peak_kb = 0;
  for (auto _ : state) {
    rusage u{};
    const int code = run({locksim.string(), "check", file.path.string()}, u);
    if (code != (violate ? 1 : 0)) {
      state.SkipWithError(("unexpected exit code " + std::to_string(code)).c_str());
      break;
    }
    cpu_s += seconds(u.ru_utime) + seconds(u.ru_stime);
    peak_kb = std::max<int64_t>(peak_kb, u.ru_maxrss);
  }
  const auto n = static_cast<double>(std::max<int64_t>(state.iterations(), 1));
  state.counters["cpu_ms"] = cpu_s / n * 1e3;
  state.counters["peak_MB"] = static_cast<double>(peak_kb) * 1024 / 1e6;
  // peak_MB is the command's only while this stays below it (see HistoryFile).
  state.counters["bench_peak_MB"] = static_cast<double>(own_peak_kb()) * 1024 / 1e6;
  state.counters["file_MB"] = static_cast<double>(fs::file_size(file.path)) / 1e6;
}
// {ops, violation at the end}
BENCHMARK(BM_CheckCommand)
    ->Args({1'000'000, 0})
    ->Args({1'000'000, 1})
    ->Iterations(5)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// {ops, split}: split 0 is parse_edn_history (one thread), 1 is
// parse_edn_history_split (two halves on two threads, what the command runs);
// Time is wall time, CPU the process's CPU time (both threads).
void BM_ParseEdnHistory(benchmark::State& state) {
  const std::string& text = history_edn(state.range(0), false);
  const bool split = state.range(1) != 0;
  for (auto _ : state) {
    const locksim::history::EdnHistory h =
        split ? locksim::history::parse_edn_history_split(text, "bench.edn")
              : locksim::history::parse_edn_history(text, "bench.edn");
    if (h.total_ops != state.range(0) + state.range(0) / 1000) {
      state.SkipWithError("unexpected op count");
      break;
    }
    benchmark::DoNotOptimize(h);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_ParseEdnHistory)
    ->Args({1'000'000, 0})
    ->Args({1'000'000, 1})
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
