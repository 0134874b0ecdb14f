// matrix.md and junit.xml.
#include <optional>

#include "env/assert.h"
#include "env/parse.h"
#include "reports/matrix.h"
#include "reports/timeline_svg.h"

namespace locksim::reports {

namespace {

std::string percent(double share) {
  const auto tenths = static_cast<int64_t>(share * 1000 + 0.5);
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + "%";
}

}  // namespace

// "850us", "12.3ms", "1311ms": latencies span microseconds to seconds. Each
// rounded to the nearest unit it shows (1.792 ms reads 1.8ms, not 1.7ms),
// and a value that rounds up into the next form takes that form (999.6 us
// reads 1.0ms).
std::string latency_text(int64_t ns) {
  if (ns < 0) return "-";
  const int64_t us = (ns + 500) / 1000;
  if (us < 1000) return std::to_string(us) + "us";
  const int64_t tenths_ms = (ns + 50'000) / 100'000;
  if (tenths_ms < 1000) {
    return std::to_string(tenths_ms / 10) + "." + std::to_string(tenths_ms % 10) + "ms";
  }
  return std::to_string((ns + 500'000) / 1'000'000) + "ms";
}

std::string data_brief(const MatrixCell& c) {
  LOCKSIM_ASSERT(c.data_runs > 0);
  return c.data_violations > 0 ? "data ✗" + std::to_string(c.data_violations) : "data ok";
}

namespace {

// One matrix cell in a line: "V 12/100 @3", "L 4/100", "ok 0/100", plus marks.
std::string cell_brief(const MatrixCell& c) {
  std::string s;
  LOCKSIM_ASSERT_MSG(c.safety == 0 || c.first_violation_seed,
                     "add_run records the first violation");
  if (c.safety > 0) {
    s = "**V** " + std::to_string(c.safety) + "/" + std::to_string(c.runs) + " (seed " +
        std::to_string(*c.first_violation_seed) + ")";
  } else if (c.liveness > 0) {
    s = "L " + std::to_string(c.liveness) + "/" + std::to_string(c.runs);
  } else if (c.unknown == c.runs && c.runs > 0) {
    s = "unknown";  // no run finished: nothing here is "ok" (?N follows)
  } else {
    s = "ok " + std::to_string(c.runs - c.unknown);  // the runs that finished clean
  }
  if (c.unknown > 0) s += " ?" + std::to_string(c.unknown);
  if (c.latent > 0) s += " ~" + std::to_string(c.latent);
  if (c.never_told > 0) s += " !" + std::to_string(c.never_told);
  if (c.data_runs > 0) s += " " + data_brief(c);
  if (c.safety == 0 && c.low_coverage()) s += " (low coverage)";
  if (c.gate.gated) s += c.gate.holds ? " ✓" : " ✗ " + c.gate.failure;
  return s;
}

std::string gate_line(const Matrix& m) {
  std::string out = "Gate: **" + gate_text(m) + "**.\n";
  if (const std::string u = unjudged_text(m); !u.empty()) out += "\n" + u + ".\n";
  return out;
}

// The slowest of the cells expected to violate, by median seeds to a
// violation: how many seeds a sweep needs before the gate can speak.
std::string median_line(const Matrix& m) {
  const MatrixCell* slowest = nullptr;
  std::optional<int64_t> worst;
  for (const auto& c : m.cells) {
    if (c.expected != "violation") continue;
    const std::optional<int64_t> median = c.median_seeds_to_violation();
    if (slowest == nullptr || (worst && (!median || *median > *worst))) {
      slowest = &c;
      worst = median;
    }
  }
  if (slowest == nullptr) return "";
  const std::string cell = slowest->algorithm + " × " + slowest->profile;
  if (!worst) {
    // Most starting seeds of that cell reach no violation before the sweep's
    // last seed: the median lies beyond it.
    return "\nMedian seeds to a violation in the cells expected to violate: more than this "
           "sweep's seeds can tell (" +
           cell + ").\n";
  }
  return "\nMedian seeds to a violation in the cells expected to violate: at most " +
         std::to_string(*worst) + " (" + cell + ").\n";
}

void overview(const Matrix& m, std::string& out) {
  out += "| algorithm |";
  for (const auto& p : m.plan.profiles) out += " " + p + " |";
  out += "\n|---|";
  for (size_t p = 0; p < m.plan.profiles.size(); ++p) out += "---|";
  out += "\n";
  for (size_t a = 0; a < m.plan.algorithms.size(); ++a) {
    out += "| " + m.plan.algorithms[a] + " |";
    for (size_t p = 0; p < m.plan.profiles.size(); ++p)
      out += " " + cell_brief(m.cell(a, p)) + " |";
    out += "\n";
  }
}

std::string median_text(std::optional<int64_t> median) {
  return median ? std::to_string(*median) : "-";
}

void details(const Matrix& m, std::string& out) {
  out +=
      "| algorithm | profile | runs | violations | liveness | latent | never told | data | rate | "
      "first failing seed | "
      "seeds to first | median seeds | events to first | p50 | p99 | acq/vmin | coverage | "
      "expected | gate |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& c : m.cells) {
    out += "| " + c.algorithm + " | " + c.profile + " | " + std::to_string(c.runs) + " | " +
           std::to_string(c.safety) + " | " + std::to_string(c.liveness) + " | " +
           std::to_string(c.latent) + " | " + std::to_string(c.never_told) + " | " +
           (c.data_runs > 0 ? std::to_string(c.data_violations) : "-") + " | " +
           percent(c.violation_rate()) + " | " +
           (c.first_violation_seed ? std::to_string(*c.first_violation_seed) : "-") + " | " +
           (c.first_violation_seed ? std::to_string(c.seeds_to_first) : "-") + " | " +
           median_text(c.median_seeds_to_violation()) + " | " +
           (c.first_violation_seed ? std::to_string(c.events_to_first) : "-") + " | " +
           latency_text(c.latency_quantile_ns(0.5)) + " | " +
           latency_text(c.latency_quantile_ns(0.99)) + " | " +
           std::to_string(static_cast<int64_t>(c.acquisitions_per_virtual_minute() + 0.5)) + " | " +
           percent(c.coverage()) + (c.low_coverage() ? " (low)" : "") + " | " +
           (c.expected.empty() ? "-" : c.expected) +
           (c.expected_data.empty() ? "" : ", data " + c.expected_data) + " | " +
           (m.gated ? gate_word(c) : "-") + " |\n";
  }
}

// A cell's lines under "First counterexample of each cell": the first
// violation's replay, the first liveness finding's (the one matrix.html
// draws when there is no violation), the shrunk file and its story, the
// first data violation's replay.
std::string cell_replays(const MatrixCell& c) {
  const std::string name = "- " + c.algorithm + " × " + c.profile;
  std::string out;
  if (c.first_violation_seed) out += name + ": `" + c.first_violation_replay + "`\n";
  if (c.first_liveness_seed) out += name + " (liveness): `" + c.first_liveness_replay + "`\n";
  if (!c.shrunk_file.empty()) {
    out += name + " shrunk: [" + c.shrunk_summary + "](" + c.shrunk_file + ")";
    if (!c.shrunk_story_file.empty())
      out += "; why: [" + c.shrunk_mechanism + "](" + c.shrunk_story_file + ")";
    out += "\n";
  } else if (!c.shrunk_error.empty()) {
    out += name + " not shrunk: " + c.shrunk_error + "\n";
  }
  if (c.first_data_violation_seed) {
    out += name + " (data): `" + c.first_data_violation_replay + "`\n";
  }
  return out;
}

}  // namespace

std::string matrix_markdown(const Matrix& m) {
  const auto& plan = m.plan;
  std::string out =
      "# locksim sweep: " + counted(static_cast<int64_t>(plan.algorithms.size()), "algorithm") +
      " × " + counted(static_cast<int64_t>(plan.profiles.size()), "fault profile") + " × seeds " +
      std::to_string(plan.seed_first) + ".." + std::to_string(plan.seed_last) + "\n\n";
  out += "Runs: " + coverage_text(m) + ".\n\n" + gate_line(m) + median_line(m) + "\n";
  overview(m, out);
  out +=
      "\nV: runs with a mutual-exclusion violation (first failing seed); L: liveness only; "
      "ok: clean; ?N: runs whose verdict is unknown; ~N: runs with a latent finding (the lease was "
      "exposed — a fresh contender would have got the lock while a client believed it held it — "
      "but nobody stepped in); !N: runs in which a holder was never told — the store dropped its "
      "lease while the holder's own clock still read it valid, and nothing told it; data ✗N / data "
      "ok: runs whose guarded resource's data broke "
      "(a stale write accepted, a lost update, an oversell), for algorithms that guard one. "
      "*Low coverage*: fewer than 25% of the "
      "runs had a fault touch a lock holder (or a server while the lock was held) — a clean "
      "low-coverage cell is **not** evidence of safety (a `none` cell has no faults: never low "
      "coverage).\n\n## Cells\n\n";
  details(m, out);
  std::string failures, replays;
  for (const auto& c : m.cells) {
    if (!c.gate.holds) {
      failures += "- **" + c.algorithm + " × " + c.profile + "**: " + c.gate.failure + ": " +
                  c.gate.message + "\n";
    }
    replays += cell_replays(c);
  }
  if (!failures.empty()) out += "\n## Gate failures\n\n" + failures;
  if (!replays.empty()) out += "\n## First counterexample of each cell\n\n" + replays;
  return out;
}

namespace {

// Under a gate, a cell it did not judge is no passing test: a CI system
// shows it as skipped, with why. Without --expect no cell is gated, and each
// case reports its counts as before.
bool skipped_case(const Matrix& m, const MatrixCell& c) {
  return m.gated && c.gate.holds && !c.gate.gated;
}

std::string skip_message(const MatrixCell& c) {
  if (c.gate.not_judged) return c.gate.message;  // "not judged: not enough seeds: ..."
  // The note says why a cell expects any; it is the file's, and can be long.
  return c.expected.empty() ? "not gated: the expectations file does not name this cell"
                            : "not gated: expected any";
}

}  // namespace

std::string matrix_junit(const Matrix& m) {
  std::string cases;
  int64_t skipped = 0;
  for (const auto& c : m.cells) {
    cases += "    <testcase classname=\"locksim." + xml_escape(c.algorithm) + "\" name=\"" +
             xml_escape(c.profile) + "\">";
    if (!c.gate.holds) {
      cases += "<failure type=\"" + xml_escape(c.gate.failure) + "\" message=\"" +
               xml_escape(c.gate.failure) + "\">" + xml_escape(c.gate.message) + "</failure>";
    } else if (skipped_case(m, c)) {
      ++skipped;
      cases += "<skipped message=\"" + xml_escape(skip_message(c)) + "\"/>";
    }
    cases +=
        "<system-out>" +
        xml_escape(counted(c.runs, "run") + ", " + counted(c.safety, "violation") + ", " +
                   counted(c.liveness, "liveness finding") +
                   (c.data_runs > 0 ? ", " + counted(c.data_violations, "data violation") : "") +
                   (c.expected.empty() ? "" : ", expected " + c.expected)) +
        "</system-out></testcase>\n";
  }
  // A CI system reads only this file: a sweep missing runs fails here too.
  const bool incomplete = gate_state(m) == GateState::kIncomplete;
  if (!m.complete()) {
    cases += "    <testcase classname=\"locksim.sweep\" name=\"coverage\">" +
             std::string(incomplete ? "<failure type=\"incomplete\" message=\"incomplete\">" +
                                          xml_escape(gate_text(m)) + "</failure>"
                                    : "") +
             "<system-out>" + xml_escape(coverage_text(m)) + "</system-out></testcase>\n";
  }
  // ... and so does a gate that judged no cell (every cell's case passes).
  const bool nothing_judged = gate_state(m) == GateState::kNothingJudged;
  if (nothing_judged) {
    cases +=
        "    <testcase classname=\"locksim.sweep\" name=\"gate\"><failure "
        "type=\"nothing-judged\" message=\"nothing judged\">" +
        xml_escape(gate_text(m)) + "</failure></testcase>\n";
  }
  const std::string n =
      std::to_string(m.cells.size() + (m.complete() ? 0 : 1) + (nothing_judged ? 1 : 0));
  const std::string f =
      std::to_string(m.gate_failures + (incomplete ? 1 : 0) + (nothing_judged ? 1 : 0));
  LOCKSIM_ASSERT(m.gate_failures + skipped <= static_cast<int64_t>(m.cells.size()));
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"locksim sweep\" tests=\"" +
         n + "\" failures=\"" + f + "\" skipped=\"" + std::to_string(skipped) +
         "\">\n  <testsuite name=\"locksim.matrix\" tests=\"" + n + "\" failures=\"" + f +
         "\" errors=\"0\" skipped=\"" + std::to_string(skipped) + "\">\n" + cases +
         "  </testsuite>\n</testsuites>\n";
}

}  // namespace locksim::reports
