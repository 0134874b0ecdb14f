#include "harness/margin/margins.h"

#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "algorithms/registry.h"
#include "env/assert.h"
#include "env/parse.h"
#include "harness/margin/kinds.h"
#include "harness/profile_deployment.h"

namespace locksim::harness::margin {

namespace {

// The algorithm's defaults, a lone holder with kTableHold, and the ttl given
// only where the default could not be run; `note` says which.
RunConfig cell_config(const std::string& algorithm, uint64_t seed, std::string& note) {
  RunConfig c;
  c.algorithm = algorithm;
  c.seed = seed;
  c.workload.clients = 1;
  c.workload.hold_min = kTableHold;
  c.workload.hold_max = kTableHold;
  if (const std::optional<Duration> ttl = ttl_param(c)) {
    note = "ttl " + format_duration(*ttl) + " (the default)";
    if (*ttl > kTableTtlMax) {
      c.algorithm_params["ttl"] = format_duration(kTableTtlFallback);
      note = "ttl " + format_duration(kTableTtlFallback) + " (the default " +
             format_duration(*ttl) + " is longer than a run may be)";
    }
  } else if (session_lock(c)) {
    note = "session timeout " + format_duration(lease_of(c)) + " (tick " +
           format_duration(c.zookeeper.tick) + ", the defaults)";
  } else {
    // Redisson's renewed lease: a watchdog timeout, no session and no tick.
    note = lease_name(c) + " " + format_duration(lease_of(c)) + " (the default)";
  }
  return c;
}

// One worker: takes cells by number until none is left (or a stop), writes
// each result into its own slot.
struct Shared {
  const std::vector<MarginCell>* cells = nullptr;
  std::vector<MarginResult>* results = nullptr;
  const CellDoneFn* on_done = nullptr;
  const std::atomic<bool>* stop = nullptr;
  std::mutex mu;
  size_t next = 0;
  size_t done = 0;
  std::exception_ptr error;  // the first, rethrown after the join
};

void work(Shared& s) {
  for (;;) {
    size_t i = 0;
    {
      const std::lock_guard<std::mutex> lock(s.mu);
      if (s.next >= s.cells->size() || s.error || (s.stop != nullptr && s.stop->load())) return;
      i = s.next++;
    }
    try {
      MarginResult r = measure_margin((*s.cells)[i].request);
      const std::lock_guard<std::mutex> lock(s.mu);
      (*s.results)[i] = std::move(r);
      ++s.done;
      if (*s.on_done) (*s.on_done)(s.done, s.cells->size(), (*s.cells)[i]);
    } catch (...) {  // a thread must not let it escape (std::terminate)
      const std::lock_guard<std::mutex> lock(s.mu);
      if (!s.error) s.error = std::current_exception();
    }
  }
}

// The varied cells: each table cell the setting applies to, at each value.
std::vector<MarginCell> varied_cells(const std::vector<MarginCell>& table, const Vary& vary) {
  std::vector<MarginCell> out;
  for (const MarginCell& cell : table) {
    const std::string& algorithm = cell.request.base.algorithm;
    if (!has_vary_param(algorithm, vary.param) || !vary_moves(vary.param, cell.request.kind)) {
      continue;
    }
    for (size_t i = 0; i < vary.values.size(); ++i) {
      MarginCell point = cell;
      apply_vary(point.request.base, vary.param, vary.values[i]);
      point.vary_param = vary.param;
      point.vary_value = vary.values[i];
      point.vary_x = vary.xs[i];
      point.request.varied = vary.param + "=" + vary.values[i];
      set_default_range(point.request);
      validate(point.request);
      out.push_back(std::move(point));
    }
  }
  if (out.empty()) {
    throw ConfigError("--vary: none of the algorithms has '" + vary.param +
                      "' with a fault kind it moves (expected e.g. ttl for set-nx-lua, "
                      "drift-factor for redlock, session-timeout for zk-recipe)");
  }
  return out;
}

}  // namespace

std::vector<MarginCell> plan_margins(const std::vector<std::string>& algorithms, uint64_t seed,
                                     const Vary* vary) {
  std::vector<MarginCell> out;
  for (const std::string& algorithm : algorithms) {
    if (algorithms::find_algorithm(algorithm) == nullptr) {
      throw ConfigError("--algorithms: unknown algorithm '" + algorithm +
                        "' (known: " + algorithms::algorithm_names() + ")");
    }
    for (const Kind kind : kinds_for(algorithm)) {
      MarginCell cell;
      cell.request.base = cell_config(algorithm, seed, cell.lease_note);
      cell.request.kind = kind;
      set_default_range(cell.request);
      validate(cell.request);
      out.push_back(std::move(cell));
    }
  }
  if (out.empty()) throw ConfigError("--algorithms: no fault kind applies to any of them");
  if (vary != nullptr) {
    std::vector<MarginCell> points = varied_cells(out, *vary);
    for (MarginCell& p : points) out.push_back(std::move(p));
  }
  return out;
}

std::vector<MarginResult> measure_margins(const std::vector<MarginCell>& cells, int jobs,
                                          const CellDoneFn& on_done,
                                          const std::atomic<bool>* stop) {
  LOCKSIM_ASSERT(jobs >= 1 && jobs <= kMarginJobsMax);
  std::vector<MarginResult> results(cells.size());
  Shared shared;
  shared.cells = &cells;
  shared.results = &results;
  shared.on_done = &on_done;
  shared.stop = stop;
  std::vector<std::thread> threads;
  const size_t count = std::min(static_cast<size_t>(jobs), std::max<size_t>(1, cells.size()));
  for (size_t t = 0; t < count; ++t) threads.emplace_back([&shared] { work(shared); });
  for (std::thread& t : threads) t.join();
  if (shared.error) std::rethrow_exception(shared.error);
  if (shared.done != cells.size()) throw std::runtime_error("margins: stopped before the end");
  return results;
}

}  // namespace locksim::harness::margin
