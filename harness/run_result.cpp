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

checkers::Validity overall_verdict(const RunResult& result) {
  return checkers::merged(result.checks);
}

}  // namespace locksim::harness
