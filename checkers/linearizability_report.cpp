#include "checkers/linearizability_report.h"

#include <fmt/format.h>

namespace locksim::checkers {

bool knossos_disagrees(const LinearizabilityReport& report) {
  if (!report.knossos) return false;
  const Verdict::Kind k = report.knossos->verdict.kind;
  return k != Verdict::Kind::kUnknown && k != report.builtin.kind;
}

std::string knossos_verdict_text(const KnossosVerdict& v) {
  switch (v.kind) {
    case Verdict::Kind::kValid:
      return "valid";
    case Verdict::Kind::kInvalid:
      return v.op_index >= 0 ? fmt::format("invalid (at op {})", v.op_index) : "invalid";
    case Verdict::Kind::kUnknown:
      return "unknown (" + v.why + ")";
  }
  return "?";
}

std::string knossos_disagreement_text(const LinearizabilityReport& report) {
  if (!knossos_disagrees(report)) return "";
  return fmt::format(
      "DISAGREEMENT: Knossos says {}, the built-in {} checker says {}: a bug in one of them "
      "(please report it with this history)",
      knossos_verdict_text(report.knossos->verdict), to_string(report.builtin.model),
      to_string(report.builtin.kind));
}

std::string ground_truth_comparison(const Verdict& truth, const LinearizabilityVerdict& history) {
  if (truth.kind == Verdict::Kind::kUnknown || truth.kind == history.kind) return "";
  if (truth.kind == Verdict::Kind::kInvalid) {
    return fmt::format(
        "note: the history alone linearizes although the ground truth shows {} overlap{}: a "
        "history records what clients were told, not what they believed",
        truth.overlaps.size(), truth.overlaps.size() == 1 ? "" : "s");
  }
  return "DISAGREEMENT: the history cannot be linearized but the ground truth is clean: the "
         "history misrecords a lease (a bug in locksim's history encoding)";
}

}  // namespace locksim::checkers
