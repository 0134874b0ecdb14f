#include "harness/run_result.h"

#include "env/assert.h"

namespace locksim::harness {

void fill_counts(RunResult& result) {
  result.client_ops = 0;
  int64_t invocations = 0;
  result.acquisitions = result.acquire_fail = result.acquire_info = 0;
  result.releases_ok = result.releases_fail = result.releases_info = 0;
  for (const history::Op& op : result.history.ops) {
    if (!history::is_client_op(op)) continue;
    // The recorder and parse_jsonl let no other f onto a client op.
    LOCKSIM_ASSERT(op.f == history::OpF::kAcquire || op.f == history::OpF::kRelease);
    ++result.client_ops;
    const bool acquire = op.f == history::OpF::kAcquire;
    switch (op.type) {
      case history::OpType::kInvoke:
        ++invocations;
        break;
      case history::OpType::kOk:
        ++(acquire ? result.acquisitions : result.releases_ok);
        break;
      case history::OpType::kFail:
        ++(acquire ? result.acquire_fail : result.releases_fail);
        break;
      case history::OpType::kInfo:
        ++(acquire ? result.acquire_info : result.releases_info);
        break;
    }
  }
  // Each completion matches one invocation (the recorder and parse_jsonl both
  // hold a history to that rule), so completions never outnumber invocations.
  const int64_t completions = result.client_ops - invocations;
  LOCKSIM_ASSERT(completions >= 0 && completions <= invocations);
  LOCKSIM_ASSERT(completions == result.acquisitions + result.acquire_fail + result.acquire_info +
                                    result.releases_ok + result.releases_fail +
                                    result.releases_info);
}

checkers::Verdict::Kind overall_verdict(const RunResult& result) {
  // An invalid verdict always comes with its evidence.
  LOCKSIM_ASSERT(result.mutex.kind != checkers::Verdict::Kind::kInvalid || !result.mutex.overlaps.empty());
  if (result.mutex.kind == checkers::Verdict::Kind::kInvalid) return checkers::Verdict::Kind::kInvalid;
  // A damaged resource is a safety finding, with its evidence.
  LOCKSIM_ASSERT(result.consequences.kind != checkers::Verdict::Kind::kInvalid ||
                 !result.consequences.explanation.empty());
  if (result.consequences.kind == checkers::Verdict::Kind::kInvalid) return checkers::Verdict::Kind::kInvalid;
  if (result.liveness.kind == checkers::Verdict::Kind::kInvalid) return checkers::Verdict::Kind::kInvalid;
  if (result.mutex.kind == checkers::Verdict::Kind::kUnknown || !result.errors.empty()) {
    return checkers::Verdict::Kind::kUnknown;
  }
  return checkers::Verdict::Kind::kValid;
}

const char* finding(const RunResult& result) {
  if (result.mutex.kind == checkers::Verdict::Kind::kInvalid) return "safety";
  if (result.consequences.kind == checkers::Verdict::Kind::kInvalid) return "safety";
  if (result.liveness.kind == checkers::Verdict::Kind::kInvalid) return "liveness";
  if (result.exposure.latent) return "latent";
  return "none";
}

}  // namespace locksim::harness
