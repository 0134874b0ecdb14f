// The fuzzers' committed corpus (fuzz/corpus/), replayed in every test run
// without libFuzzer: each input either reads or is one ConfigError line that
// names the source. Inputs that once crashed a reader stay here as regressions
// (number-overflow.json, newline-in-key.json, newline-in-duration.json).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "checkers/linearizability.h"
#include "env/parse.h"
#include "harness/prepared_run.h"
#include "harness/scenario.h"
#include "history/edn_history.h"

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::stringstream ss;
  ss << std::ifstream(p, std::ios::binary).rdbuf();
  return ss.str();
}

template <class Read>
int replay(const std::string& dir, Read read) {
  int inputs = 0;
  for (const auto& entry :
       fs::directory_iterator(fs::path(LOCKSIM_SOURCE_DIR) / "fuzz/corpus" / dir)) {
    ++inputs;
    const std::string text = slurp(entry.path());
    try {
      read(text);
    } catch (const locksim::ConfigError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find('\n'), std::string::npos) << entry.path() << ": " << what;
      EXPECT_EQ(what.rfind("corpus", 0), 0u) << entry.path() << ": " << what;
    }
  }
  return inputs;
}

TEST(FuzzCorpus, EdnHistoryInputsReadOrFailInOneLine) {
  const int n = replay("edn_history", [](const std::string& text) {
    const auto h = locksim::history::parse_edn_history(text, "corpus");
    if (!locksim::checkers::find_rule_break(h.ops)) {
      (void)locksim::checkers::check_linearizable(h.ops);
    }
  });
  EXPECT_GE(n, 10);
}

TEST(FuzzCorpus, ScenarioInputsReadOrFailInOneLine) {
  const int n = replay("scenario", [](const std::string& text) {
    (void)locksim::harness::prepare_run(locksim::harness::parse_scenario(text, "corpus").config);
  });
  EXPECT_GE(n, 15);
}

}  // namespace
