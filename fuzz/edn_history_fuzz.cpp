// libFuzzer target: the EDN history reader and, behind it, the history
// rules and the linearizability checker. Every input must either parse or be
// a one-line ConfigError, and the split read (two halves on two threads,
// cut here at the first line past the middle) must give the same ops and
// lines or the same error; any other exception, crash, sanitizer report or
// broken invariant is a finding. Build and run (docs/HACKING.md, "Fuzzing"):
//   cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DLOCKSIM_FUZZ=ON
//   cmake --build build-fuzz --target edn_history_fuzz
//   build-fuzz/edn_history_fuzz -max_total_time=60 -dict=fuzz/edn.dict NEW_DIR fuzz/corpus/edn_history
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "env/parse.h"
#include "checkers/knossos.h"
#include "checkers/linearizability.h"
#include "history/edn_history.h"
#include "history/edn_part.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();  // libFuzzer reports the input that got here
}

// The split read of a text cut at the first line start past its middle.
struct SplitRead {
  bool cut = false;  // the text has such a line start
  std::optional<locksim::history::EdnHistory> history;
  std::string error;
};

SplitRead split_read(std::string_view text) {
  SplitRead s;
  const size_t nl = text.find('\n', text.size() / 2);
  s.cut = nl != std::string_view::npos && nl + 1 < text.size();
  if (!s.cut) return s;
  try {
    s.history = locksim::history::parse_edn_history_cut(text, "fuzz.edn", nl + 1, {});
  } catch (const locksim::ConfigError& e) {
    s.error = e.what();
  }
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace checkers = locksim::checkers;
  namespace history = locksim::history;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const SplitRead split = split_read(text);
  history::EdnHistory h;
  try {
    h = history::parse_edn_history(text, "fuzz.edn");
  } catch (const locksim::ConfigError& e) {
    check(std::string_view(e.what()).find('\n') == std::string_view::npos);  // one line
    check(std::string_view(e.what()).starts_with("fuzz.edn:"));              // names where
    check(!split.cut || (!split.history && split.error == e.what()));       // the same error
    return 0;
  }
  check(h.ops.size() == h.lines.size());
  if (split.cut) {  // the same ops, lines and counts
    check(split.history && split.history->lines == h.lines &&
          split.history->total_ops == h.total_ops && split.history->skipped_ops == h.skipped_ops &&
          split.history->ops.size() == h.ops.size());
    for (size_t i = 0; i < h.ops.size(); ++i) {
      const history::Op& x = split.history->ops[i];
      check(x.index == h.ops[i].index && x.process == h.ops[i].process &&
            x.type == h.ops[i].type && x.f == h.ops[i].f && x.time_ns == h.ops[i].time_ns);
    }
  }
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
