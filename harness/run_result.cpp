#include "harness/run_result.h"

#include "env/assert.h"

namespace locksim::harness {

void fill_counts(RunResult& result) {
  result.client_ops = 0;
  result.acquisitions = result.acquire_fail = result.acquire_info = 0;
  result.releases_ok = result.releases_fail = result.releases_info = 0;
  for (const Op& op : result.history.ops) {
    if (!is_client_op(op)) continue;
    // The recorder and parse_jsonl let no other f onto a client op.
    LOCKSIM_ASSERT(op.f == OpF::kAcquire || op.f == OpF::kRelease);
    ++result.client_ops;
    const bool acquire = op.f == OpF::kAcquire;
    switch (op.type) {
      case OpType::kInvoke:
        break;
      case OpType::kOk:
        ++(acquire ? result.acquisitions : result.releases_ok);
        break;
      case OpType::kFail:
        ++(acquire ? result.acquire_fail : result.releases_fail);
        break;
      case OpType::kInfo:
        ++(acquire ? result.acquire_info : result.releases_info);
        break;
    }
  }
}

Verdict::Kind overall_verdict(const RunResult& result) {
  if (result.mutex.kind == Verdict::Kind::kInvalid) return Verdict::Kind::kInvalid;
  if (result.liveness.kind == Verdict::Kind::kInvalid) return Verdict::Kind::kInvalid;
  if (result.mutex.kind == Verdict::Kind::kUnknown || !result.errors.empty()) {
    return Verdict::Kind::kUnknown;
  }
  return Verdict::Kind::kValid;
}

const char* finding(const RunResult& result) {
  if (result.mutex.kind == Verdict::Kind::kInvalid) return "safety";
  if (result.liveness.kind == Verdict::Kind::kInvalid) return "liveness";
  return "none";
}

}  // namespace locksim::harness
