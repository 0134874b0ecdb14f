#include "harness/run_result.h"

namespace locksim::harness {

void fill_counts(RunResult& result) {
  result.acquisitions = result.acquire_fail = result.acquire_info = 0;
  result.releases_ok = result.releases_fail = result.releases_info = 0;
  for (const Op& op : result.history.ops) {
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
