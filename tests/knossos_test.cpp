// The outside referee: Knossos (Jepsen's linearizability checker, `mutex`
// model, in ../shared/tools/knossos) reads locksim's history.edn as written,
// nemesis ops included, and gives the verdict it gives on the client ops
// alone. That is why to_edn has no client-only mode (history_io.h).
//
// Needs knossos.sh ($LOCKSIM_KNOSSOS, else ../shared/tools/knossos/knossos.sh
// beside the source tree) and java; skips with a message without them, but
// FAILS when CI=true: a CI machine must have the referee (scripts/setup
// installs its Debian packages).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "history/history_io.h"
#include "harness/run.h"
#include "harness/scenario.h"
#include "real_servers.h"

namespace locksim::harness {
namespace {

namespace fs = std::filesystem;

using ::locksim::testing::in_ci;

fs::path knossos_script() {
  if (const char* p = std::getenv("LOCKSIM_KNOSSOS"); p != nullptr && *p != '\0') return p;
  return fs::path(LOCKSIM_SOURCE_DIR) / ".." / "shared" / "tools" / "knossos" / "knossos.sh";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The history without its nemesis ops, re-indexed: what a client-only EDN
// would hold.
history::History client_ops_only(const history::History& h) {
  history::History out;
  for (const history::Op& op : h.ops) {
    if (!history::is_client_op(op)) continue;
    out.ops.push_back(op);
    out.ops.back().index = static_cast<int64_t>(out.ops.size()) - 1;
  }
  return out;
}

// Runs knossos.sh (wgl) on `files` in one JVM and returns its verdict lines
// ("true", "false" or ":unknown"), one per file, in order.
std::vector<std::string> knossos_verdicts(const fs::path& script,
                                          const std::vector<fs::path>& files, const fs::path& dir) {
  // 1 GB is plenty for a few hundred ops; the default 8 GB would crowd a small CI machine.
  std::string cmd = "KNOSSOS_HEAP=1g KNOSSOS_TIMEOUT=300 '" + script.string() + "' --algorithm wgl";
  for (const fs::path& f : files) cmd += " '" + f.string() + "'";
  cmd += " >'" + (dir / "out").string() + "' 2>'" + (dir / "err").string() + "'";
  const int status = std::system(cmd.c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  EXPECT_EQ(code, 0) << cmd << "\nstderr: " << slurp(dir / "err");
  std::vector<std::string> verdicts;
  std::istringstream out(slurp(dir / "out"));
  for (std::string line; std::getline(out, line);) {
    if (line == "true" || line == "false" || line == ":unknown") verdicts.push_back(line);
  }
  return verdicts;
}

TEST(Knossos, AcceptsNemesisOpsAndGivesTheClientOnlyVerdict) {
  const fs::path script = knossos_script();
  std::string missing;
  if (!fs::exists(script)) missing = "knossos.sh not found at " + script.string();
  if (missing.empty() && std::system("command -v java >/dev/null 2>&1") != 0) {
    missing = "java not found (Debian: default-jre-headless, see scripts/setup)";
  }
  if (!missing.empty()) {
    if (in_ci()) FAIL() << missing << "; CI=true, so the referee must be there";
    GTEST_SKIP() << missing << "; set LOCKSIM_KNOSSOS to run this test";
  }

  const fs::path dir =
      fs::temp_directory_path() / ("locksim_knossos_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // A violation found by a pause, and a safe run with partitions, a crash and
  // a restart: Knossos must say false and true, with and without the faults.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"set-nx-lua-gc-pause", "false"}, {"redlock-delayed-restart", "true"}};
  std::vector<fs::path> files;
  std::vector<std::string> expected;
  for (const auto& [name, verdict] : cases) {
    const history::History h = simulate_and_check(load_scenario(name).config).result.history;
    const std::string with = history::to_edn(h);
    ASSERT_NE(with.find(":process :nemesis"), std::string::npos) << name << " has faults";
    std::ofstream(dir / (name + ".edn"), std::ios::binary) << with;
    std::ofstream(dir / (name + "-clients.edn"), std::ios::binary) << history::to_edn(client_ops_only(h));
    files.push_back(dir / (name + ".edn"));
    files.push_back(dir / (name + "-clients.edn"));
    expected.insert(expected.end(), {verdict, verdict});
  }
  EXPECT_EQ(knossos_verdicts(script, files, dir), expected) << slurp(dir / "out");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace locksim::harness
