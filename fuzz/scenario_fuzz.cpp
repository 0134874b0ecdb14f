// libFuzzer target: the scenario reader (harness::parse_scenario) and the
// validation a run applies to what it read (harness::prepare_run). Every
// input must either give a scenario or a one-line ConfigError naming the
// source; any other exception, crash, sanitizer report or broken invariant
// is a finding. Build and run as fuzz/edn_history_fuzz.cpp says, with
// -dict=fuzz/scenario.dict and fuzz/corpus/scenario.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "env/parse.h"
#include "harness/prepared_run.h"
#include "harness/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const locksim::harness::Scenario sc = locksim::harness::parse_scenario(text, "fuzz.json");
    if (sc.config.algorithm.empty()) std::abort();   // "algorithm" is required
    (void)locksim::harness::prepare_run(sc.config);  // the checks across fields
  } catch (const locksim::ConfigError& e) {
    const std::string_view what(e.what());
    if (what.find('\n') != std::string_view::npos || !what.starts_with("fuzz.json")) std::abort();
  }
  return 0;
}
