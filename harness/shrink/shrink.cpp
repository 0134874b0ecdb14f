#include "harness/shrink/shrink.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "env/assert.h"
#include "env/parse.h"
#include "harness/backends.h"
#include "harness/explain_run.h"
#include "harness/prepared_run.h"
#include "harness/run.h"
#include "harness/settings.h"
#include "harness/shrink/search.h"
#include "history/history.h"

namespace locksim::harness::shrink {

const char* to_string(Finding f) {
  switch (f) {
    case Finding::kNone:
      return "none";
    case Finding::kSafety:
      return "safety";
    case Finding::kConsequence:
      return "consequence";
    case Finding::kLiveness:
      return "liveness";
  }
  return "?";
}

namespace {

bool has_invalid(const std::vector<checkers::Check>& checks, checkers::Kind kind) {
  for (const checkers::Check& c : checks) {
    if (c.decides && c.validity == checkers::Validity::kInvalid && c.kind == kind) return true;
  }
  return false;
}

}  // namespace

Finding finding_of(const std::vector<checkers::Check>& checks) {
  if (has_invalid(checks, checkers::Kind::kConsequence)) return Finding::kConsequence;
  if (has_invalid(checks, checkers::Kind::kSafety)) return Finding::kSafety;
  if (has_invalid(checks, checkers::Kind::kLiveness)) return Finding::kLiveness;
  return Finding::kNone;
}

bool keeps_finding(Finding wanted, const std::vector<checkers::Check>& checks) {
  switch (wanted) {
    case Finding::kNone:
      LOCKSIM_ASSERT_MSG(false, "only a failing run is shrunk");
      return false;
    case Finding::kSafety:
      return has_invalid(checks, checkers::Kind::kSafety);
    case Finding::kConsequence:
      return has_invalid(checks, checkers::Kind::kConsequence);
    case Finding::kLiveness:
      return has_invalid(checks, checkers::Kind::kLiveness) &&
             std::string(checkers::finding(checks)) == "liveness";
  }
  return false;
}

RunConfig materialized(const RunConfig& prepared, const faults::FaultSchedule& drawn) {
  RunConfig out = prepared;
  out.profile.clear();
  for (const faults::FaultEvent& e : drawn.events) out.faults.events.push_back(e);
  LOCKSIM_ASSERT(out.faults.events.size() == prepared.faults.events.size() + drawn.events.size());
  LOCKSIM_ASSERT(out.seed == prepared.seed && out.algorithm == prepared.algorithm);
  return out;
}

Fails real_runs(Finding wanted, checkers::Mechanism cause) {
  LOCKSIM_ASSERT(wanted != Finding::kNone);
  const bool keep_cause =
      cause != checkers::Mechanism::kNone && cause != checkers::Mechanism::kUndetermined;
  return [wanted, cause, keep_cause](const RunConfig& candidate) {
    try {
      RunExtras extras;
      extras.trace_lock = keep_cause;  // what explain reads of the servers
      const RunResult r = run_prepared(prepare_run(candidate), extras).result;
      if (!keeps_finding(wanted, r.checks)) return false;
      return !keep_cause || explain_result(r).mechanism == cause;
    } catch (const ConfigError&) {
      return false;  // e.g. a fault naming c4 in a candidate with three clients
    }
  };
}

checkers::Mechanism cause_of(const RunConfig& config) {
  RunExtras extras;
  extras.trace_lock = true;
  return explain_result(simulate_and_check(config, extras).result).mechanism;
}

namespace {

// The grids the bisections search on. Coarser than the simulator's
// nanoseconds on purpose: a shrunk scenario is read by people, and "pause
// @holder at 2.4s for 5.1s" says as much as "at 2.417s for 5.093s" at half
// the questions (a 20 s range is 8 questions at 100 ms, 15 at 1 ms).
constexpr Duration kFaultTimeStep = Duration::millis(100);  // fault times, lengths, jumps
constexpr Duration kDelayStep = Duration::millis(10);       // a delay's extra latency
constexpr Duration kRunStep = Duration::seconds(1);         // the run's length
constexpr int64_t kDriftStepPpm = 1000;
// An earlier start is scanned, not bisected (Search::earlier_fault): a
// second a question, up to two minutes of run.
constexpr Duration kEarlierScanStep = Duration::seconds(1);
constexpr int kEarlierScanMax = 120;
constexpr int64_t kLossStepPpm = 10'000;  // loss rate, in millionths: 1 %

// The search over one failing config. Holds the smallest failing config so
// far (`smallest_`): every step asks only about configs derived from it and
// takes one only when it fails, so whenever the search stops, `smallest_` is
// a config the predicate said fails (or the input).
class Search {
 public:
  Search(const RunConfig& failing, const Fails& fails, const Options& options)
      : smallest_(failing),
        seed_(failing.seed),
        algorithm_(failing.algorithm),
        fails_(fails),
        options_(options) {
    LOCKSIM_ASSERT(options.runs_max >= 0 && options.runs_max <= Options::kRunsMaxMax);
  }

  Result run();

 private:
  bool fails(const RunConfig& candidate);
  // Takes `candidate` when it fails.
  bool take_if_fails(const RunConfig& candidate);
  bool shrink_fault_list();
  bool lower_client_targets();
  bool shrink_clients();
  bool shrink_servers();
  bool shrink_fault(size_t i);
  bool shrink_sides(size_t i);
  bool shrink_run_length();
  bool earlier_fault(size_t i);
  bool later_fault(size_t i);
  bool narrow_holds();
  // Bisects one number of fault `i` (get/set) down toward `lo` on a grid of
  // `step`; takes the smallest that fails.
  using Get = std::function<int64_t(const faults::FaultEvent&)>;
  using Set = std::function<void(faults::FaultEvent&, int64_t)>;
  bool smaller(size_t i, int64_t lo, int64_t step, const Get& get, const Set& set);

  RunConfig smallest_;
  const uint64_t seed_;  // every candidate runs the input's seed and algorithm
  const std::string algorithm_;
  const Fails& fails_;
  const Options& options_;
  // Answers by the candidate's settings (settings_to_json: every setting,
  // seed and algorithm included), so a question asked twice runs once.
  std::map<std::string, bool> answers_;
  int runs_ = 0;
  Stopped stopped_ = Stopped::kDone;
  bool rescanned_ = false;  // shrink_clients' scan for two clients ran
};

bool Search::fails(const RunConfig& candidate) {
  const std::string key = settings_to_json(candidate).dump();
  if (const auto it = answers_.find(key); it != answers_.end()) return it->second;
  if (stopped_ == Stopped::kDone && options_.stop != nullptr && options_.stop->load()) {
    stopped_ = Stopped::kInterrupted;
  }
  if (stopped_ == Stopped::kDone && runs_ >= options_.runs_max) stopped_ = Stopped::kRunsMax;
  // A stopped search answers "passes" without running and remembers nothing,
  // so the steps unwind with what they have.
  if (stopped_ != Stopped::kDone) return false;
  LOCKSIM_ASSERT(candidate.seed == seed_ && candidate.algorithm == algorithm_);
  ++runs_;
  const bool failed = fails_(candidate);
  answers_.emplace(key, failed);
  if (options_.on_run) options_.on_run(runs_, failed ? candidate : smallest_);
  LOCKSIM_ASSERT(runs_ <= options_.runs_max);
  return failed;
}

bool Search::take_if_fails(const RunConfig& candidate) {
  if (!fails(candidate)) return false;
  smallest_ = candidate;
  return true;
}

Result Search::run() {
  Result r;
  for (int round = 1;; ++round) {
    shrink_fault_list();
    // The fault list was checked against `smallest_` as it is now.
    r.one_minimal = stopped_ == Stopped::kDone;
    if (stopped_ != Stopped::kDone || round == kRoundsMax) break;
    bool changed = lower_client_targets();
    changed |= shrink_clients();
    changed |= shrink_servers();
    for (size_t i = 0; i < smallest_.faults.events.size(); ++i) changed |= shrink_fault(i);
    for (size_t i = 0; i < smallest_.faults.events.size(); ++i) changed |= earlier_fault(i);
    changed |= shrink_run_length();
    for (size_t i = 0; i < smallest_.faults.events.size(); ++i) changed |= later_fault(i);
    changed |= narrow_holds();
    // A change after the fault list's check may make a fault removable:
    // another round checks it again.
    if (changed) r.one_minimal = false;
    if (!changed || stopped_ != Stopped::kDone) break;
  }
  r.smallest = smallest_;
  r.runs = runs_;
  r.stopped = stopped_;
  LOCKSIM_ASSERT(r.smallest.seed == seed_ && r.smallest.algorithm == algorithm_);
  LOCKSIM_ASSERT(r.runs <= options_.runs_max);
  return r;
}

bool Search::shrink_fault_list() {
  const RunConfig base = smallest_;
  const size_t n = base.faults.events.size();
  auto with = [&base](const std::vector<size_t>& kept) {
    RunConfig c = base;
    c.faults.events.clear();
    for (size_t i : kept) c.faults.events.push_back(base.faults.events[i]);
    return c;
  };
  const std::vector<size_t> kept = ddmin(n, [&](const auto& s) { return fails(with(s)); });
  LOCKSIM_ASSERT(kept.size() <= n);
  if (kept.size() == n) return false;
  smallest_ = with(kept);
  return true;
}

// A fault that names a client by number keeps that many clients: "crash c3"
// needs three. So each such target is tried as a lower-numbered client,
// lowest first, before the clients step; a side of a partition never names
// one node twice.
bool Search::lower_client_targets() {
  bool changed = false;
  const int clients = smallest_.workload.clients;
  auto number_of = [clients](const std::string& name) {
    for (int c = 0; c < clients; ++c) {
      if (name == history::client_label(c)) return c;
    }
    return -1;  // a server, @holder or @primary
  };
  for (size_t i = 0; i < smallest_.faults.events.size(); ++i) {
    // Every target of fault i: its node (0), then side A's and side B's.
    for (size_t slot = 0;; ++slot) {
      faults::FaultEvent& e = smallest_.faults.events[i];
      const size_t a = e.side_a.size();
      if (slot > a + e.side_b.size()) break;
      const auto target = [slot, a](faults::FaultEvent& f) -> std::string& {
        return slot == 0 ? f.node : slot <= a ? f.side_a[slot - 1] : f.side_b[slot - 1 - a];
      };
      const std::vector<std::string>& side = slot == 0   ? std::vector<std::string>{}
                                             : slot <= a ? e.side_a
                                                         : e.side_b;
      const int number = number_of(target(e));
      for (int lower = 0; lower < number; ++lower) {
        const std::string name = history::client_label(lower);
        if (std::find(side.begin(), side.end(), name) != side.end()) continue;
        RunConfig c = smallest_;
        target(c.faults.events[i]) = name;
        if (take_if_fails(c)) {
          changed = true;
          break;
        }
      }
    }
  }
  return changed;
}

// The highest client number a fault of `c` names (c3: 3), 0 for none: a
// candidate with fewer clients does not validate, so is not worth a run.
int clients_named(const RunConfig& c) {
  int named = 0;
  auto see = [&](const std::string& name) {
    for (int k = named; k < c.workload.clients; ++k) {
      if (name == history::client_label(k)) named = k + 1;
    }
  };
  for (const faults::FaultEvent& e : c.faults.events) {
    see(e.node);
    for (const std::string& n : e.side_a) see(n);
    for (const std::string& n : e.side_b) see(n);
  }
  return named;
}

// From one client up (from the highest a fault names): the fewest that still
// fail.
//
// Fewer clients change who holds the lock when, so a fault timed for five
// clients often misses with two. When no smaller count fails as it is, two
// clients are tried once more (once a search) with each fault in turn moved
// to every whole second of the run (at most kEarlierScanMax runs a fault):
// "two clients" is the story a reader wants, and it is worth a few dozen runs.
bool Search::shrink_clients() {
  const int clients = smallest_.workload.clients;
  const int named = clients_named(smallest_);
  for (int k = std::max(1, named); k < clients; ++k) {
    RunConfig c = smallest_;
    c.workload.clients = k;
    if (take_if_fails(c)) return true;
  }
  if (clients <= 2 || named > 2 || rescanned_) return false;
  rescanned_ = true;
  for (size_t i = 0; i < smallest_.faults.events.size(); ++i) {
    for (int k = 0; k < kEarlierScanMax && kEarlierScanStep * k < smallest_.duration; ++k) {
      RunConfig c = smallest_;
      c.workload.clients = 2;
      c.faults.events[i].at = kEarlierScanStep * k;
      if (take_if_fails(c)) return true;
    }
  }
  return false;
}

bool Search::smaller(size_t i, int64_t lo, int64_t step, const Get& get, const Set& set) {
  const int64_t now = get(smallest_.faults.events[i]);
  if (now <= lo) return false;
  const RunConfig base = smallest_;
  auto with = [&](int64_t v) {
    RunConfig c = base;
    set(c.faults.events[i], v);
    return c;
  };
  const int64_t v = smallest_failing(lo, now, step, [&](int64_t x) { return fails(with(x)); });
  if (v == now) return false;
  LOCKSIM_ASSERT(v >= lo && v < now);
  smallest_ = with(v);
  return true;
}

// Fewer servers where the algorithm allows: Redis masters (Redlock's N, odd
// and at least three, so it stays a quorum lock) and replicas, MySQL
// replicas, a smaller (odd) ZooKeeper ensemble. Each count is tried from the
// smallest up; a candidate the settings refuse (a failover with no replica
// left, a fault naming a server that is gone) does not fail, so is not taken.
bool Search::shrink_servers() {
  auto smallest_of = [this](int current, int lo, int step,
                            const std::function<void(RunConfig&, int)>& set) {
    for (int k = lo; k < current; k += step) {
      RunConfig c = smallest_;
      set(c, k);
      if (take_if_fails(c)) return true;
    }
    return false;
  };
  const std::string backend = backend_of(smallest_).name;
  bool changed = false;
  if (backend == "redis") {
    const int masters = resolved_topology(smallest_).masters;
    if (masters > 1)
      changed |= smallest_of(masters, 3, 2, [](RunConfig& c, int k) { c.redis.masters = k; });
    changed |= smallest_of(smallest_.redis.replicas, 0, 1,
                           [](RunConfig& c, int k) { c.redis.replicas = k; });
  } else if (backend == "mysql") {
    changed |= smallest_of(smallest_.mysql.replicas, 0, 1,
                           [](RunConfig& c, int k) { c.mysql.replicas = k; });
  } else if (backend == "zookeeper") {
    changed |= smallest_of(smallest_.zookeeper.servers, 1, 2,
                           [](RunConfig& c, int k) { c.zookeeper.servers = k; });
  }
  return changed;
}

// Whether `e`'s duration is a length that can shrink: a crash without one
// stays down and a partition without one lasts until a heal, which a length
// would change into another fault, not a smaller one.
bool has_length(const faults::FaultEvent& e) {
  using faults::FaultKind;
  if (e.kind == FaultKind::kPause || e.kind == FaultKind::kDelay) return true;
  const bool timed_kind =
      e.kind == FaultKind::kCrash || e.kind == FaultKind::kPartition || e.kind == FaultKind::kLoss;
  return timed_kind && e.duration > Duration::zero();
}

int64_t sign_of(int64_t v) {
  return v < 0 ? -1 : 1;
}

bool Search::shrink_fault(size_t i) {
  using faults::FaultEvent;
  using faults::FaultKind;
  const FaultEvent& e = smallest_.faults.events[i];
  bool changed = false;
  if (has_length(e)) {
    changed |= smaller(
        i, kFaultTimeStep.ns, kFaultTimeStep.ns, [](const FaultEvent& f) { return f.duration.ns; },
        [](FaultEvent& f, int64_t v) { f.duration = Duration::nanos(v); });
  }
  // Magnitudes shrink toward zero and keep their sign (a clock jumped back
  // does not break what a jump forward breaks).
  switch (smallest_.faults.events[i].kind) {
    case FaultKind::kSetDrift:
      changed |= smaller(
          i, kDriftStepPpm, kDriftStepPpm,
          [](const FaultEvent& f) { return std::abs(f.drift_ppm); },
          [](FaultEvent& f, int64_t v) { f.drift_ppm = sign_of(f.drift_ppm) * v; });
      break;
    case FaultKind::kJumpClock:
      changed |= smaller(
          i, kFaultTimeStep.ns, kFaultTimeStep.ns,
          [](const FaultEvent& f) { return std::abs(f.jump.ns); },
          [](FaultEvent& f, int64_t v) { f.jump = Duration::nanos(sign_of(f.jump.ns) * v); });
      break;
    case FaultKind::kDelay:
      changed |= smaller(
          i, kDelayStep.ns, kDelayStep.ns, [](const FaultEvent& f) { return f.delay.ns; },
          [](FaultEvent& f, int64_t v) { f.delay = Duration::nanos(v); });
      break;
    case FaultKind::kLoss:
      changed |= smaller(
          i, kLossStepPpm, kLossStepPpm,
          [](const FaultEvent& f) { return std::llround(f.loss_probability * 1e6); },
          [](FaultEvent& f, int64_t v) { f.loss_probability = static_cast<double>(v) / 1e6; });
      break;
    default:
      break;
  }
  changed |= shrink_sides(i);
  return changed;
}

// Fewer nodes on each side of a partition, delay or loss: each node in turn,
// while its side keeps at least one.
bool Search::shrink_sides(size_t i) {
  bool changed = false;
  for (int side = 0; side < 2; ++side) {
    const auto& nodes = [&]() -> const std::vector<std::string>& {
      const faults::FaultEvent& e = smallest_.faults.events[i];
      return side == 0 ? e.side_a : e.side_b;
    };
    for (size_t k = 0; nodes().size() > 1 && k < nodes().size();) {
      RunConfig c = smallest_;
      auto& list = side == 0 ? c.faults.events[i].side_a : c.faults.events[i].side_b;
      list.erase(list.begin() + static_cast<ptrdiff_t>(k));
      if (take_if_fails(c)) {
        changed = true;  // the next node moved into place k
      } else {
        ++k;
      }
    }
  }
  return changed;
}

// The fault as early as it still fails, so that the run can end soon after
// it (the next step): a pause at 49 s makes a 58 s scenario, one at 3 s a
// 12 s one. Not a bisection: whether a fault at time t breaks the lock is
// far from monotone in t (an @holder pause needs a holder at t, a plain one
// needs its node to hold then), and a bisection lands on whichever failing
// time its midpoints happen to hit. So whole seconds are scanned from 0 up
// to the first that fails (at most kEarlierScanMax runs), then bisected
// within the second before it.
bool Search::earlier_fault(size_t i) {
  const Duration at = smallest_.faults.events[i].at;
  auto with = [&](Duration t) {
    RunConfig c = smallest_;
    c.faults.events[i].at = t;
    return c;
  };
  Duration first = at;
  for (int k = 0; k < kEarlierScanMax && kEarlierScanStep * k < at; ++k) {
    if (fails(with(kEarlierScanStep * k))) {
      first = kEarlierScanStep * k;
      break;
    }
  }
  if (first < at) smallest_ = with(first);
  const bool moved = first < at;
  const Duration floor = std::max(Duration::zero(), first - kEarlierScanStep);
  return smaller(
             i, floor.ns, kFaultTimeStep.ns, [](const faults::FaultEvent& f) { return f.at.ns; },
             [](faults::FaultEvent& f, int64_t v) { f.at = Duration::nanos(v); }) ||
         moved;
}

// Whole seconds, from one up: the run ends soon after its finding.
bool Search::shrink_run_length() {
  const RunConfig base = smallest_;
  if (base.duration <= kRunStep) return false;
  auto with = [&base](int64_t ns) {
    RunConfig c = base;
    c.duration = Duration::nanos(ns);
    return c;
  };
  const int64_t ns = smallest_failing(kRunStep.ns, base.duration.ns, kRunStep.ns,
                                      [&](int64_t v) { return fails(with(v)); });
  if (ns == base.duration.ns) return false;
  smallest_ = with(ns);
  return true;
}

// Then, inside the run as shortened, the fault as late as it still fails:
// the "later start", which shows the reader the last moment the
// fault still breaks the lock. Bounded by the run's end, so it never makes
// the run longer again.
bool Search::later_fault(size_t i) {
  const RunConfig base = smallest_;
  const Duration at = base.faults.events[i].at;
  const Duration latest = base.duration - kFaultTimeStep;
  if (latest <= at) return false;
  auto with = [&](int64_t ns) {
    RunConfig c = base;
    c.faults.events[i].at = Duration::nanos(ns);
    return c;
  };
  const int64_t ns = largest_failing(at.ns, latest.ns, kFaultTimeStep.ns,
                                     [&](int64_t v) { return fails(with(v)); });
  if (ns == at.ns) return false;
  smallest_ = with(ns);
  return true;
}

// One hold length instead of a range: the shortest, else the longest.
bool Search::narrow_holds() {
  const WorkloadParams& w = smallest_.workload;
  if (w.hold_min == w.hold_max) return false;
  RunConfig shortest = smallest_;
  shortest.workload.hold_max = w.hold_min;
  if (take_if_fails(shortest)) return true;
  RunConfig longest = smallest_;
  longest.workload.hold_min = w.hold_max;
  return take_if_fails(longest);
}

}  // namespace

int servers_of(const RunConfig& config) {
  const std::string backend = backend_of(config).name;
  if (backend == "redis") {
    const sim::redis::Topology t = resolved_topology(config);
    return t.masters * (t.replicas + 1);
  }
  if (backend == "mysql") return 1 + config.mysql.replicas;
  return config.zookeeper.servers;
}

Result shrink(const RunConfig& failing, const Fails& fails, const Options& options) {
  Search search(failing, fails, options);
  return search.run();
}

}  // namespace locksim::harness::shrink
