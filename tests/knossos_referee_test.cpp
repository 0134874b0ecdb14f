// Knossos as the outside referee: its output parsed right, its failures
// reported as unknown (never as locksim failures), and — the acceptance test —
// zero disagreements with the built-in checker over more than a thousand
// histories: random ones, and locksim's own from every algorithm with and
// without faults and from every shipped scenario.
//
// Knossos is found through LOCKSIM_KNOSSOS, else at
// ${LOCKSIM_SOURCE_DIR}/../shared/tools/knossos/knossos.sh. When it (or java)
// is missing the tests that need it are skipped with a message — except under
// CI=true, where that is a failure. Its heap is LOCKSIM_KNOSSOS_HEAP (default
// 2g): the machine is shared.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "checkers/knossos.h"
#include "checkers/linearizability.h"
#include "harness/run.h"
#include "history/history_io.h"
#include "lock_history_gen.h"
#include "real_servers.h"
#include "run_corpus.h"

namespace locksim::harness {
namespace {

namespace fs = std::filesystem;

using ::locksim::testing::in_ci;

// The Knossos command, or "" with *missing saying what is missing.
std::string knossos_command(std::string* missing) {
  std::string cmd;
  if (const char* k = std::getenv("LOCKSIM_KNOSSOS"); k != nullptr && *k != '\0') {
    cmd = k;
  } else {
    const std::string fallback =
        std::string(LOCKSIM_SOURCE_DIR) + "/../shared/tools/knossos/knossos.sh";
    if (access(fallback.c_str(), X_OK) != 0) {
      *missing = "Knossos: LOCKSIM_KNOSSOS is not set and " + fallback + " does not exist";
      return "";
    }
    cmd = fallback;
  }
  if (std::system("command -v java >/dev/null 2>&1") != 0) {
    *missing = "java (Debian package default-jre-headless), which Knossos needs";
    return "";
  }
  return cmd;
}

#define KNOSSOS_OR_SKIP(cmd)                                                           \
  std::string missing_;                                                                \
  const std::string cmd = knossos_command(&missing_);                                  \
  if (cmd.empty()) {                                                                   \
    if (in_ci()) FAIL() << "CI=true and " << missing_ << " is missing";                \
    GTEST_SKIP() << "skipped: " << missing_ << " is missing (docs/how-to/knossos.md)"; \
  }

checkers::KnossosOptions options(const std::string& cmd, Duration limit) {
  checkers::KnossosOptions o;
  o.command = cmd;
  o.time_limit = limit;
  const char* heap = std::getenv("LOCKSIM_KNOSSOS_HEAP");
  o.heap = heap != nullptr && *heap != '\0' ? heap : "2g";
  return o;
}

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / (name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

TEST(KnossosReferee, ParsesItsOutput) {
  const std::string out =
      "a.edn\t{:valid? true, :model {:locked? false}, :analyzer :wgl}\ntrue\n"
      "b.edn\t{:valid? false,\n :op\n {:process 1,\n  :type :ok,\n  :f :acquire,\n  :index 11,\n"
      "  :time 2462957465},\n :previous-ok {:index 3}}\nfalse\n"
      "c.edn\t{:valid? :unknown, :cause :timeout}\n:unknown\n"
      "d.edn\n\nOh jeez, I'm sorry. Something went wrong.\n";
  const auto v = checkers::parse_knossos_output(out, {"a.edn", "b.edn", "c.edn", "d.edn", "e.edn"},
                                                "crashed (exit 255)");
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v[0].kind, checkers::Verdict::Kind::kValid);
  EXPECT_EQ(v[1].kind, checkers::Verdict::Kind::kInvalid);
  EXPECT_EQ(v[1].op_index, 11);
  EXPECT_EQ(v[2].kind, checkers::Verdict::Kind::kUnknown);
  EXPECT_EQ(v[2].why, "Knossos answered :unknown");
  EXPECT_EQ(v[3].kind, checkers::Verdict::Kind::kUnknown);
  EXPECT_EQ(v[3].why, "crashed (exit 255)");
  EXPECT_EQ(v[4].why, "crashed (exit 255)");
}

// Fake Knossos commands: a failure of the referee is an unknown verdict.
TEST(KnossosReferee, FailuresAreUnknownNeverErrors) {
  const fs::path d = temp_dir("locksim-fake-knossos");
  write(d / "h.edn", "{:process 0, :type :invoke, :f :acquire}\n");
  const std::string h = (d / "h.edn").string();
  write(d / "ok.sh",
        "for f in \"$@\"; do case $f in -*|wgl) ;; *) printf '%s\\t{}\\ntrue\\n' \"$f\";; "
        "esac; done; echo \"heap=$KNOSSOS_HEAP\" >&2\n");
  write(d / "slow.sh", "sleep 30\n");
  write(d / "oom.sh", "echo 'java.lang.OutOfMemoryError: Java heap space' >&2; exit 3\n");
  write(d / "boom.sh", "echo first >&2; echo 'the last words' >&2; exit 9\n");
  auto run = [&](const std::string& script, Duration limit) {
    return checkers::run_knossos({h}, options("sh " + (d / script).string(), limit));
  };
  const checkers::KnossosRun ok = run("ok.sh", Duration::seconds(20));
  EXPECT_EQ(ok.verdicts[0].kind, checkers::Verdict::Kind::kValid);
  EXPECT_NE(ok.stderr_tail.find("heap=2g"), std::string::npos) << ok.stderr_tail;
  EXPECT_GT(ok.peak_rss_bytes, 0);
  const checkers::KnossosRun slow = run("slow.sh", Duration::millis(500));
  EXPECT_EQ(slow.verdicts[0].why, "timed out after 500ms");
  EXPECT_LT(slow.seconds, 10);
  EXPECT_EQ(run("oom.sh", Duration::seconds(20)).verdicts[0].why, "out of memory (heap 2g)");
  EXPECT_EQ(run("boom.sh", Duration::seconds(20)).verdicts[0].why,
            "crashed (exit 9): the last words");
  const checkers::KnossosRun none =
      checkers::run_knossos({h}, options("/nonexistent/knossos", Duration::seconds(20)));
  EXPECT_EQ(none.verdicts[0].kind, checkers::Verdict::Kind::kUnknown);
  EXPECT_NE(none.verdicts[0].why.find("command not found"), std::string::npos)
      << none.verdicts[0].why;
  fs::remove_all(d);
}

struct Case {
  std::string name;
  std::vector<history::Op> ops;
  checkers::Verdict::Kind truth =
      checkers::Verdict::Kind::kUnknown;  // locksim runs: the ground truth
  std::string algorithm;                  // locksim runs: which algorithm
};

std::vector<Case> agreement_corpus() {
  std::vector<Case> cases;
  std::vector<testing::CorpusRun> runs = testing::algorithm_fault_runs(12);
  for (auto& r : testing::scenario_runs(8)) runs.push_back(std::move(r));
  for (uint64_t seed : {3, 5}) {  // the two getset-clock-skew seeds Knossos used to misread
    Scenario sc = load_scenario("getset-clock-skew");
    sc.config.seed = seed;
    // As the scenario was before its idle gaps: these seeds' histories.
    sc.config.workload.idle_min = sc.config.workload.idle_max = Duration::zero();
    runs.push_back(
        {"getset-clock-skew seed " + std::to_string(seed), sc.config.algorithm, sc.config});
  }
  for (const testing::CorpusRun& run : runs) {
    const RunResult r = simulate_and_check(run.config).result;
    cases.push_back({run.name, r.history.ops, r.mutex.kind, run.algorithm});
  }
  testing::GenOptions g;
  g.processes_max = 5;
  g.events_max = 60;
  g.ok = 0.7;
  g.fail = 0.15;
  g.follow_f = 0.9;
  sim::Rng rng(4242);
  for (int i = 0; i < 700; ++i) {
    const uint64_t seed = rng.next();
    sim::Rng one(seed);
    cases.push_back({"random history seed " + std::to_string(seed),
                     testing::random_lock_history(one, g), checkers::Verdict::Kind::kUnknown, ""});
  }
  return cases;
}

// The acceptance test: >= 1,000 histories, one Knossos call, zero disagreements.
TEST(KnossosReferee, AgreesWithTheBuiltInCheckerOnMoreThanAThousandHistories) {
  KNOSSOS_OR_SKIP(cmd);
  const std::vector<Case> cases = agreement_corpus();
  ASSERT_GE(cases.size(), 1000u);
  const fs::path d = temp_dir("locksim-knossos-agreement");
  std::vector<std::string> files;
  for (size_t i = 0; i < cases.size(); ++i) {
    files.push_back((d / (std::to_string(i) + ".edn")).string());
    write(files.back(), checkers::knossos_edn(cases[i].ops));
  }
  const checkers::KnossosRun run =
      checkers::run_knossos(files, options(cmd, Duration::seconds(1200)));
  ASSERT_EQ(run.verdicts.size(), cases.size());
  std::map<std::string, int> counts;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const checkers::LinearizabilityVerdict mine = checkers::check_linearizable(c.ops);
    const checkers::KnossosVerdict& theirs = run.verdicts[i];
    ASSERT_NE(theirs.kind, checkers::Verdict::Kind::kUnknown)
        << c.name << ": " << theirs.why << "\nstderr: " << run.stderr_tail;
    EXPECT_EQ(theirs.kind, mine.kind) << c.name << " (" << files[i] << "): Knossos says "
                                      << to_string(theirs.kind) << "; " << mine.explanation;
    if (c.truth == checkers::Verdict::Kind::kValid) {
      EXPECT_EQ(theirs.kind, checkers::Verdict::Kind::kValid) << c.name << ": clean ground truth";
    }
    counts[std::string(c.truth == checkers::Verdict::Kind::kUnknown ? "random" : "locksim") + " " +
           to_string(mine.kind)]++;
    if (!c.algorithm.empty()) counts[c.algorithm + " " + to_string(c.truth)]++;
  }
  std::printf("Knossos (wgl) and the built-in checker on %zu histories in %.1fs, %s peak:\n",
              cases.size(), run.seconds, checkers::format_bytes(run.peak_rss_bytes).c_str());
  for (const auto& [k, n] : counts) std::printf("  %-16s %d\n", k.c_str(), n);
  EXPECT_GT(counts["locksim invalid"], 100);
  EXPECT_GT(counts["locksim valid"], 100);
  EXPECT_GT(counts["random invalid"], 100);
  EXPECT_GT(counts["random valid"], 100);
  for (const auto& spec : algorithms::all_algorithms()) {  // violating and clean runs of each
    EXPECT_GT(counts[spec.name + " invalid"], 5) << spec.name;
    EXPECT_GT(counts[spec.name + " valid"], 5) << spec.name;
  }
  if (!HasFailure()) fs::remove_all(d);
}

struct Outcome {
  int exit_code = -1;
  std::string out;
};

Outcome locksim(const std::string& args) {
  const fs::path out = temp_dir("locksim-knossos-cli") / "out";
  const int status = std::system(
      (std::string(LOCKSIM_BINARY) + " " + args + " >" + out.string() + " 2>&1").c_str());
  std::stringstream ss;
  ss << std::ifstream(out).rdbuf();
  fs::remove_all(out.parent_path());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ss.str()};
}

TEST(KnossosReferee, CheckCommandShowsBothCheckersSideBySide) {
  KNOSSOS_OR_SKIP(cmd);
  const fs::path d = temp_dir("locksim-knossos-check");
  write(d / "bad.edn",
        "{:process 0, :type :invoke, :f :acquire}\n{:process 0, :type :ok, :f :acquire}\n"
        "{:process :nemesis, :type :info, :f :start, :value nil}\n"
        "{:process 1, :type :invoke, :f :acquire}\n{:process 1, :type :ok, :f :acquire}\n");
  const Outcome o = locksim("check " + (d / "bad.edn").string() + " --knossos '" + cmd +
                            "' --knossos-heap 1g --knossos-time-limit 300s");
  EXPECT_EQ(o.exit_code, 1) << o.out;
  EXPECT_NE(o.out.find("INVALID"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("Knossos    mutex        invalid (at op 4)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("1 nemesis op skipped"), std::string::npos) << o.out;
  // A referee that disagrees is loud and exits 3.
  write(d / "yes.sh",
        "for f in \"$@\"; do case $f in -*|wgl) ;; *) printf '%s\\t{}\\ntrue\\n' "
        "\"$f\";; esac; done\n");
  const Outcome lie = locksim("check " + (d / "bad.edn").string() + " --knossos 'sh " +
                              (d / "yes.sh").string() + "'");
  EXPECT_EQ(lie.exit_code, 3) << lie.out;
  EXPECT_EQ(lie.out.rfind("DISAGREEMENT: Knossos says valid, the built-in mutex checker says "
                          "invalid",
                          0),
            0u)
      << lie.out;
  fs::remove_all(d);
}

TEST(KnossosReferee, RunWithKnossosReportsItsVerdict) {
  KNOSSOS_OR_SKIP(cmd);
  // getset-clock-skew as it was before its idle gaps: seed 3 reads clean.
  const fs::path file = fs::temp_directory_path() /
                        ("locksim-getset-no-idle-" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << R"({"name": "getset-no-idle", "expect": "safe",
    "algorithm": "getset-timestamp", "params": {"ttl": "10s"}, "seed": 1, "duration": "60s",
    "workload": {"clients": 3, "hold": "2s..3s"}, "faults": ["jump c2 at 0s +9s"]})";
  const Outcome o = locksim("run --scenario " + file.string() + " --seed 3 --knossos '" + cmd +
                            "' --knossos-heap 1g --knossos-time-limit 300s");
  fs::remove(file);
  EXPECT_EQ(o.exit_code, 0) << o.out;
  EXPECT_NE(o.out.find("history: linearizable in the mutex model (built-in checker); Knossos: "
                       "valid ("),
            std::string::npos)
      << o.out;
}

}  // namespace
}  // namespace locksim::harness
