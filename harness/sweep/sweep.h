// Sweeps: algorithms x fault profiles x seeds, each run independent.
//
// A sweep's runs are numbered in one fixed order (algorithm, then profile,
// then seed, each in the order given), and everything about a sweep's output
// is decided by that numbering, never by which thread or shard ran what or
// when: `--shard i/N` takes the runs whose number is i-1 modulo N, each
// finished run is appended to DIR/runs.jsonl as one line (in finishing order,
// which does not matter), and the report is built from those lines sorted by
// run number. So threads, shards, kills and resumes all give the same report.
//
// Each run is single-threaded in its own World; workers are plain threads,
// each with its own fiber scheduler (sim::SimScheduler is per thread) and
// assertion context (env/assert.h is per thread). Shared state is only the
// output file and the counters, behind one mutex.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/run_config.h"
#include "harness/run_result.h"

namespace locksim::harness {

struct SweepPlan {
  std::vector<std::string> algorithms;  // names, in report order
  std::vector<std::string> profiles;    // "pause", "pause+partition", ... in column order
  uint64_t seed_first = 1;
  uint64_t seed_last = 1;
  int shard_index = 1;  // 1..shard_count
  int shard_count = 1;
  // The settings every run shares besides algorithm, profile and seed (the
  // table's defaults unless the sweep was given others, e.g. --duration).
  RunConfig base;
  // "script:FILE.json" -> the SHA-1 of the file's bytes when the sweep
  // began: a lock file changed under the same name is another lock, which
  // --resume, merge and shrink --sweep must not mix with the runs made.
  std::map<std::string, std::string> script_sha1;

  uint64_t seeds() const { return seed_last - seed_first + 1; }
  uint64_t runs_total() const { return algorithms.size() * profiles.size() * seeds(); }
  // Whether run `index` belongs to this plan's shard.
  bool in_shard(uint64_t index) const {
    return index % static_cast<uint64_t>(shard_count) == static_cast<uint64_t>(shard_index - 1);
  }
  // The run's number in the fixed order.
  uint64_t index_of(size_t algorithm, size_t profile, uint64_t seed) const;
  // Its inverse. Precondition (asserted): index < runs_total().
  struct Coordinates {
    size_t algorithm = 0, profile = 0;
    uint64_t seed = 0;
  };
  Coordinates coordinates_of(uint64_t index) const;
  // The config of one run.
  RunConfig config_of(const std::string& algorithm, const std::string& profile,
                      uint64_t seed) const;
};

// The most runs one sweep plans (algorithms x profiles x seeds), across all
// its shards. Its report is made from every run's summary, held in memory
// at about 1 KB a run (a 100,000-run sweep peaked at 95 MB; runs.jsonl
// takes 400 bytes a run): a million runs is about 1 GB, eight times the
// 1,000-seed matrix of every algorithm and profile. The 100 M seeds
// --seeds once allowed asked for 100 GB, and a sweep that cannot write its
// report is all cost.
inline constexpr uint64_t kSweepRunsMax = 1'000'000;

// Throws ConfigError naming `field` when `plan` has more than kSweepRunsMax
// runs, with the product that makes them.
void refuse_too_many_runs(const SweepPlan& plan, const std::string& field);

// "1..1000" (or one seed "7"). Throws ConfigError naming `field`.
std::pair<uint64_t, uint64_t> parse_seed_range(const std::string& text, const std::string& field);
// "2/4" -> {2, 4}; 1 <= i <= N <= 10000. Throws ConfigError naming `field`.
std::pair<int, int> parse_shard(const std::string& text, const std::string& field);
// "all" or a comma list of known algorithm names / profiles (each profile may
// combine parts with '+'). Throws ConfigError naming `field` and the bad item.
std::vector<std::string> parse_algorithm_list(const std::string& text, const std::string& field);
std::vector<std::string> parse_profile_list(const std::string& text, const std::string& field);

// The SHA-1 of each lock script file among `algorithms`, read now. Throws
// ConfigError naming `field` for a file it cannot read.
std::map<std::string, std::string> script_digests(const std::vector<std::string>& algorithms,
                                                  const std::string& field);
// Throws ConfigError naming `field` and the file when a lock script of the
// plan is no longer the bytes its runs ran (plan.script_sha1).
void refuse_changed_scripts(const SweepPlan& plan, const std::string& field);

// The plan as DIR/sweep.json holds it (without the shard, with it when
// `with_shard`), and back. from_json throws ConfigError naming `source`.
nlohmann::ordered_json plan_to_json(const SweepPlan& plan, bool with_shard);
SweepPlan plan_from_json(const nlohmann::json& j, const std::string& source);

// What the report keeps of one run: one line of runs.jsonl.
struct RunSummary {
  uint64_t index = 0;
  std::string algorithm, profile;
  uint64_t seed = 0;
  // "safety", "liveness", "latent" (lease exposure without a violation),
  // "none", or "unknown" (a client error)
  std::string finding;
  // What happened to the guarded resource's data (the consequence checker):
  // "" no resource ran, "safe", or "violation" (a stale write accepted, a
  // lost update, an oversell).
  std::string data;
  int64_t overlaps = 0;
  // Held intervals whose store dropped the lease while the holder believed it
  // held, and that nothing told (checkers/exposure_checker.h).
  int64_t never_told = 0;
  int64_t acquisitions = 0;
  int64_t run_length_ns = 0;
  int64_t events = 0;
  int64_t faults = 0;          // fault ops the nemesis applied (not ends, not skips)
  bool fault_touched = false;  // a fault hit a holder, or a server while the lock was held
  // Acquire latency (invoke to :ok) histogram: bucket (latency_bucket) -> count.
  std::map<int, int64_t> latency;
  std::string replay;
  std::string error;    // the first client error, if any
  int64_t wall_ns = 0;  // real time the run took: timing only, never in the matrix
};

// Latency buckets: four per power of two of microseconds (within 25 %).
int latency_bucket(int64_t latency_ns);
// The smallest latency (ns) of a bucket's range, for percentiles.
int64_t latency_bucket_floor_ns(int bucket);

// What the report keeps of `result`, run number `index` of `plan`.
RunSummary summarize_run(const RunResult& result, uint64_t index, const std::string& profile);
// Whether any applied fault touched a lock holder (a client fault on a
// client while it held, or after for a clock fault) or a server while anyone
// held the lock: fault coverage's numerator.
bool fault_touched_holder(const history::History& history, int64_t* faults_applied);

nlohmann::ordered_json summary_to_json(const RunSummary& s);
// Throws ConfigError naming `field` for a line that is not a summary.
RunSummary summary_from_json(const nlohmann::json& j, const std::string& field);

// Reads DIR/runs.jsonl: every complete line (a line cut short by a kill is
// skipped), deduplicated by run number, sorted by run number. A missing
// file is no runs. Throws ConfigError naming the line when a run is not
// one of `plan`'s: its number out of range or of another shard, or its
// algorithm, profile or seed not those of its number (an edited line, or
// another sweep's), which would break the report's invariants.
std::vector<RunSummary> read_runs(const std::string& path, const SweepPlan& plan);

struct SweepOptions {
  int jobs = 1;         // worker threads, >= 1
  bool resume = false;  // keep runs already in DIR/runs.jsonl
  // Set (e.g. by SIGINT) to stop: no run is taken after it, and a run in
  // flight is cut within 2^16 events and dropped, as if never taken.
  const std::atomic<bool>* stop = nullptr;
  // Called (under the sweep's lock, from a worker) after each run is
  // appended: runs done so far in this shard (also resumed ones), runs of the
  // shard, findings so far.
  std::function<void(uint64_t done, uint64_t total, uint64_t findings)> on_progress;
  // Real time for RunSummary::wall_ns, supplied by the caller (harness/ keeps
  // no real clock: scripts/check-determinism). May be empty (then 0).
  std::function<int64_t()> wall_now_ns;
  // Also keep each run's history: DIR/histories/ALGORITHM/PROFILE/SEED.jsonl
  // (history::to_jsonl, byte for byte what `locksim run --out` writes), so two
  // builds can be compared run by run (scripts/compare-builds).
  bool histories = false;
  // Files and folders of DIR that an earlier sweep's report left (matrix.*,
  // shrunk/: the caller's to name), removed once DIR's plan is checked and
  // before any run, resumed or not: a report, or a kill before one is
  // written, must never sit beside files that other runs made.
  std::vector<std::string> stale_outputs;
};

// Runs the plan's shard into DIR (created; DIR/sweep.json and DIR/runs.jsonl)
// and returns every run summary of DIR, sorted. With resume, DIR's plan must
// match `plan` (ConfigError otherwise) and runs already there are skipped;
// without, DIR/runs.jsonl starts empty and an earlier sweep's DIR/histories/
// is removed (its runs are not this sweep's). Either way
// options.stale_outputs are removed.
std::vector<RunSummary> run_sweep(const SweepPlan& plan, const std::string& dir,
                                  const SweepOptions& options);

// Removes DIR/NAME for each name (a file or a folder; a name, never a
// path): what an earlier sweep or merge left that this one will not vouch
// for. Throws std::runtime_error when one cannot be removed.
void remove_outputs(const std::string& dir, const std::vector<std::string>& names);

}  // namespace locksim::harness
