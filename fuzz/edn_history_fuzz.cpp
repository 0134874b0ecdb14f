// libFuzzer target: the EDN history reader and, behind it, the history
// rules and the linearizability checker. Every input must either parse or be
// a one-line ConfigError; any other exception, crash, sanitizer report or
// broken invariant is a finding. Build and run (docs/HACKING.md, "Fuzzing"):
//   cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DLOCKSIM_FUZZ=ON
//   cmake --build build-fuzz --target edn_history_fuzz
//   build-fuzz/edn_history_fuzz -max_total_time=60 -dict=fuzz/edn.dict NEW_DIR fuzz/corpus/edn_history
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "env/parse.h"
#include "checkers/knossos.h"
#include "checkers/linearizability.h"
#include "history/edn_history.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();  // libFuzzer reports the input that got here
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace checkers = locksim::checkers;
  namespace history = locksim::history;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  history::EdnHistory h;
  try {
    h = history::parse_edn_history(text, "fuzz.edn");
  } catch (const locksim::ConfigError& e) {
    check(std::string_view(e.what()).find('\n') == std::string_view::npos);  // one line
    check(std::string_view(e.what()).starts_with("fuzz.edn:"));              // names where
    return 0;
  }
  check(h.ops.size() == h.lines.size());
  if (checkers::find_rule_break(h.ops)) return 0;
  const checkers::LinearizabilityVerdict a = checkers::check_linearizable(h.ops, checkers::MutexModel::kMutex);
  const checkers::LinearizabilityVerdict b = checkers::check_linearizable(h.ops, checkers::MutexModel::kOwnerMutex);
  check(a.kind != checkers::Verdict::Kind::kUnknown && b.kind != checkers::Verdict::Kind::kUnknown);
  // Owner-mutex is the stricter model: what it accepts, mutex accepts.
  check(b.kind == checkers::Verdict::Kind::kInvalid || a.kind == checkers::Verdict::Kind::kValid);
  // What locksim hands Knossos reads back as the same ops and the same verdict.
  const history::EdnHistory again = history::parse_edn_history(checkers::knossos_edn(h.ops), "again.edn");
  check(again.ops.size() == h.ops.size());
  for (size_t i = 0; i < h.ops.size(); ++i) {
    check(again.ops[i].index == h.ops[i].index && again.ops[i].process == h.ops[i].process &&
          again.ops[i].type == h.ops[i].type && again.ops[i].f == h.ops[i].f &&
          again.ops[i].time_ns == h.ops[i].time_ns);
  }
  check(checkers::check_linearizable(again.ops, checkers::MutexModel::kMutex).kind == a.kind);
  return 0;
}
