// The sweep engine: worker threads take runs by number, each run in its own
// World on its own thread, and append each finished run's summary to
// DIR/runs.jsonl at once (flushed), so a kill loses at most the runs in flight.
#include "harness/sweep/sweep.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>
#include <thread>

#include "env/assert.h"
#include "env/atomic_file.h"
#include "env/parse.h"
#include "harness/run.h"
#include "history/history_io.h"

namespace locksim::harness {

namespace {

namespace fs = std::filesystem;

constexpr int kJobsMax = 256;  // more threads than this is a typo, not a machine

// A kill mid-append can leave a last line without its newline: cut it off,
// so the lines appended next start on a line of their own.
void drop_cut_line(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return;
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t keep = bytes.rfind('\n') == std::string::npos ? 0 : bytes.rfind('\n') + 1;
  if (keep != bytes.size()) fs::resize_file(path, keep);
  LOCKSIM_ASSERT(fs::file_size(path) == keep);
}

// Writes DIR/sweep.json, or checks it against `plan` when resuming.
void prepare_dir(const SweepPlan& plan, const std::string& dir, bool resume) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw ConfigError("--out: cannot create directory '" + dir + "': " + ec.message());
  const fs::path plan_path = fs::path(dir) / "sweep.json";
  const std::string text = plan_to_json(plan, true).dump(2) + "\n";
  if (resume && fs::exists(plan_path)) {
    std::ifstream in(plan_path);
    const std::string old((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (old != text) {
      // A lock file changed under its name is said as such, not as a
      // different sweep: the flags are the same.
      SweepPlan recorded = plan;
      recorded.script_sha1.clear();  // none, unless the old file is a plan that has them
      const nlohmann::json j = nlohmann::json::parse(old, nullptr, false);
      try {
        if (!j.is_discarded())
          recorded.script_sha1 = plan_from_json(j, plan_path.string()).script_sha1;
      } catch (const ConfigError&) {
        // Not a plan this build reads: the different-sweep line below says so.
      }
      refuse_changed_scripts(recorded, "--resume");
      throw ConfigError("--resume: " + plan_path.string() +
                        " is a different sweep (algorithms, profiles, seeds, shard or settings "
                        "differ); use another --out or drop --resume");
    }
    drop_cut_line((fs::path(dir) / "runs.jsonl").string());
    return;
  }
  if (resume) drop_cut_line((fs::path(dir) / "runs.jsonl").string());
  std::ofstream out(plan_path, std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + plan_path.string());
  if (!resume) std::ofstream(fs::path(dir) / "runs.jsonl", std::ios::trunc);
}

// The caller's stale outputs, and DIR/histories/ too unless resuming: what
// an earlier sweep wrote and this one will not vouch for.
void remove_stale(const std::string& dir, const SweepOptions& o) {
  std::vector<std::string> names = o.stale_outputs;
  if (!o.resume) names.emplace_back("histories");
  remove_outputs(dir, names);
}

// The runs of the plan's shard not yet in `done`, in run order.
struct PendingRun {
  uint64_t index;
  size_t algorithm, profile;
  uint64_t seed;
};

std::vector<PendingRun> pending_runs(const SweepPlan& plan, const std::set<uint64_t>& done) {
  std::vector<PendingRun> out;
  for (size_t a = 0; a < plan.algorithms.size(); ++a) {
    for (size_t p = 0; p < plan.profiles.size(); ++p) {
      for (uint64_t seed = plan.seed_first; seed <= plan.seed_last; ++seed) {
        const uint64_t index = plan.index_of(a, p, seed);
        if (plan.in_shard(index) && done.count(index) == 0) out.push_back({index, a, p, seed});
        LOCKSIM_ASSERT_MSG(out.empty() || out.back().index <= index, "runs in number order");
      }
    }
  }
  return out;
}

// Shared by the workers: the next run to take, the output, the counters.
struct Shared {
  std::mutex mu;
  std::ofstream out;
  size_t next = 0;
  uint64_t done = 0;
  uint64_t findings = 0;
  std::exception_ptr error;  // the first exception a worker caught; the sweep stops
};

// DIR/histories/ALGORITHM/PROFILE/SEED.jsonl, written atomically (an
// interrupted sweep leaves no half-written history). Each run writes its own
// file, so workers need no lock here.
void write_history(const std::string& dir, const RunResult& result, const std::string& profile) {
  const fs::path folder = fs::path(dir) / "histories" / result.algorithm / profile;
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) throw std::runtime_error("cannot create " + folder.string() + ": " + ec.message());
  write_file_atomically(folder / (std::to_string(result.seed) + ".jsonl"),
                        history::to_jsonl(result.history));
}

void worker(const SweepPlan& plan, const std::vector<PendingRun>& runs, const SweepOptions& o,
            const std::string& dir, uint64_t shard_total, Shared& shared) {
  for (;;) {
    size_t taken = 0;
    {
      std::lock_guard<std::mutex> lock(shared.mu);
      if (shared.next >= runs.size()) return;
      if (o.stop != nullptr && o.stop->load()) return;
      if (shared.error) return;
      taken = shared.next++;
    }
    const PendingRun& run = runs[taken];
    const std::string& profile = plan.profiles[run.profile];
    const int64_t started = o.wall_now_ns ? o.wall_now_ns() : 0;
    RunSummary s;
    try {
      RunExtras extras;
      // A stop cuts a run in flight too (a long run would hold the sweep
      // for its whole length); a cut run is dropped, and --resume redoes it.
      if (o.stop != nullptr) extras.poll = [&o](TimePoint, uint64_t) { return !o.stop->load(); };
      const SimRunReport report = simulate_and_check(
          plan.config_of(plan.algorithms[run.algorithm], profile, run.seed), extras);
      if (report.output.stopped) return;
      s = summarize_run(report.result, run.index, profile);
      if (o.histories) write_history(dir, report.result, profile);
    } catch (...) {  // a thread must not let it escape (std::terminate)
      std::lock_guard<std::mutex> lock(shared.mu);
      if (!shared.error) shared.error = std::current_exception();
      return;
    }
    s.wall_ns = o.wall_now_ns ? o.wall_now_ns() - started : 0;
    // The summary names the run it was taken for (pair: summarize_run).
    LOCKSIM_ASSERT(s.index == run.index && s.seed == run.seed);
    LOCKSIM_ASSERT(s.algorithm == plan.algorithms[run.algorithm]);
    const std::string line = summary_to_json(s).dump() + "\n";
    std::lock_guard<std::mutex> lock(shared.mu);
    shared.out << line << std::flush;
    if (!shared.out) throw std::runtime_error("cannot append to runs.jsonl");
    ++shared.done;
    if (s.finding != "none") ++shared.findings;
    LOCKSIM_ASSERT(shared.done <= shard_total);
    if (o.on_progress) o.on_progress(shared.done, shard_total, shared.findings);
  }
}

}  // namespace

void remove_outputs(const std::string& dir, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    LOCKSIM_ASSERT_MSG(!name.empty() && name.find('/') == std::string::npos,
                       "a stale output is a name inside DIR");
    const fs::path path = fs::path(dir) / name;
    std::error_code ec;
    fs::remove_all(path, ec);
    if (ec) throw std::runtime_error("cannot remove " + path.string() + ": " + ec.message());
    LOCKSIM_ASSERT(!fs::exists(path));
  }
}

namespace {

// Empty when run `s` is one of `plan`'s, else why not.
std::string not_of_plan(const SweepPlan& plan, const RunSummary& s) {
  if (s.index >= plan.runs_total()) {
    return "run " + std::to_string(s.index) + " is not in this sweep (" +
           std::to_string(plan.runs_total()) + " runs)";
  }
  if (!plan.in_shard(s.index)) {
    return "run " + std::to_string(s.index) + " is not in this sweep's shard " +
           std::to_string(plan.shard_index) + "/" + std::to_string(plan.shard_count);
  }
  const SweepPlan::Coordinates at = plan.coordinates_of(s.index);
  const std::string& algorithm = plan.algorithms[at.algorithm];
  const std::string& profile = plan.profiles[at.profile];
  if (s.algorithm == algorithm && s.profile == profile && s.seed == at.seed) return "";
  return "run " + std::to_string(s.index) + " is " + s.algorithm + " × " + s.profile + " seed " +
         std::to_string(s.seed) + ", but this sweep's run " + std::to_string(s.index) + " is " +
         algorithm + " × " + profile + " seed " + std::to_string(at.seed);
}

}  // namespace

std::vector<RunSummary> read_runs(const std::string& path, const SweepPlan& plan) {
  std::vector<RunSummary> runs;
  std::ifstream in(path);
  if (!in) return runs;
  std::string line;
  int64_t number = 0;
  std::set<uint64_t> seen;
  while (std::getline(in, line)) {
    ++number;
    if (in.eof()) break;  // no newline: cut short by a kill mid-write; the run is redone
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) {
      throw ConfigError(path + ":" + std::to_string(number) + ": not a JSON line");
    }
    RunSummary s = summary_from_json(j, path + ":" + std::to_string(number));
    if (const std::string why = not_of_plan(plan, s); !why.empty()) {
      throw ConfigError(path + ":" + std::to_string(number) + ": " + why);
    }
    if (seen.insert(s.index).second) runs.push_back(std::move(s));
  }
  std::sort(runs.begin(), runs.end(),
            [](const RunSummary& a, const RunSummary& b) { return a.index < b.index; });
  for (size_t i = 1; i < runs.size(); ++i) {
    LOCKSIM_ASSERT_MSG(runs[i - 1].index < runs[i].index, "each run once, in number order");
  }
  return runs;
}

std::vector<RunSummary> run_sweep(const SweepPlan& plan, const std::string& dir,
                                  const SweepOptions& options) {
  LOCKSIM_ASSERT(plan.shard_index >= 1 && plan.shard_index <= plan.shard_count);
  if (options.jobs < 1 || options.jobs > kJobsMax) {
    throw ConfigError("--jobs: expected 1.." + std::to_string(kJobsMax) + ", got " +
                      std::to_string(options.jobs));
  }
  // Every run's config is checked before any thread starts: bad input is
  // exit 2 at once, never a worker's exception halfway through.
  for (const auto& a : plan.algorithms) {
    for (const auto& p : plan.profiles) validate(plan.config_of(a, p, plan.seed_first));
  }
  prepare_dir(plan, dir, options.resume);
  remove_stale(dir, options);
  const std::string runs_path = (fs::path(dir) / "runs.jsonl").string();
  std::set<uint64_t> done;
  uint64_t findings = 0;
  for (const RunSummary& s : read_runs(runs_path, plan)) {
    done.insert(s.index);
    if (s.finding != "none") ++findings;
  }
  const std::vector<PendingRun> runs = pending_runs(plan, done);
  Shared shared;
  shared.done = done.size();
  shared.findings = findings;
  shared.out.open(runs_path, std::ios::app);
  if (!shared.out) throw std::runtime_error("cannot open " + runs_path);
  const uint64_t shard_total = done.size() + runs.size();
  LOCKSIM_ASSERT_MSG(shard_total == (plan.runs_total() + static_cast<uint64_t>(plan.shard_count) -
                                     static_cast<uint64_t>(plan.shard_index)) /
                                        static_cast<uint64_t>(plan.shard_count),
                     "done and pending runs make up the shard exactly");
  std::vector<std::thread> threads;
  const int jobs = std::min<int>(options.jobs, std::max<int>(1, static_cast<int>(runs.size())));
  for (int t = 0; t < jobs; ++t) {
    threads.emplace_back([&plan, &runs, &options, &dir, shard_total, &shared] {
      worker(plan, runs, options, dir, shard_total, shared);
    });
  }
  for (auto& t : threads) t.join();
  shared.out.close();
  if (shared.error) std::rethrow_exception(shared.error);
  std::vector<RunSummary> all = read_runs(runs_path, plan);
  LOCKSIM_ASSERT_MSG(all.size() <= shard_total, "runs.jsonl holds only this shard's runs");
  return all;
}

}  // namespace locksim::harness
