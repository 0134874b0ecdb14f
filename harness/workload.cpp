#include "harness/workload.h"

#include <algorithm>
#include <cassert>

namespace locksim::harness {

namespace {

OpType op_type(algorithms::Outcome o) {
  switch (o) {
    case algorithms::Outcome::kOk:
      return OpType::kOk;
    case algorithms::Outcome::kFail:
      return OpType::kFail;
    case algorithms::Outcome::kUnknown:
      return OpType::kInfo;
  }
  return OpType::kInfo;
}

}  // namespace

void run_client(Env& env, algorithms::LockAlgorithm& algorithm, int client,
                const WorkloadParams& params, Truth& truth, int64_t first_process) {
  assert(params.hold_min <= params.hold_max);
  int64_t process = first_process >= 0 ? first_process : client;

  auto op = [&](OpType type, OpF f) {
    Op o;
    o.process = process;
    o.client = client;
    o.type = type;
    o.f = f;
    return o;
  };

  for (int64_t n = 0; n < params.max_ops_per_client && !truth.stopping(); ++n) {
    truth.record(op(OpType::kInvoke, OpF::kAcquire), false, false);
    const algorithms::AcquireResult acquired = algorithm.acquire(env, params.resource);
    Op done = op(op_type(acquired.outcome), OpF::kAcquire);
    done.detail = acquired.detail;
    if (acquired.outcome == algorithms::Outcome::kOk) {
      done.token = acquired.lease.token;
      done.fence = acquired.lease.fence;
    }
    // The ground-truth interval opens in the same step as the :ok op, so no
    // other client's op can fall between the two.
    truth.record(done, acquired.outcome == algorithms::Outcome::kOk, false);
    if (acquired.outcome == algorithms::Outcome::kUnknown) process = truth.fresh_process();
    if (acquired.outcome != algorithms::Outcome::kOk) {
      env.sleep(params.retry_pause);
      continue;
    }

    // The critical section: the client believes it holds the lock throughout.
    Duration hold{random_between(env, params.hold_min.ns, params.hold_max.ns)};
    if (params.hold_within_validity && acquired.lease.validity < hold) {
      hold = std::max(acquired.lease.validity, Duration::zero());
    }
    // The algorithm may cut the hold short (it learned the lock may be lost).
    algorithm.hold(env, acquired.lease, hold);

    Op release = op(OpType::kInvoke, OpF::kRelease);
    release.token = acquired.lease.token;
    release.fence = acquired.lease.fence;
    truth.record(release, false, true);
    const algorithms::ReleaseResult released = algorithm.release(env, acquired.lease);
    Op release_done = op(op_type(released.outcome), OpF::kRelease);
    release_done.token = acquired.lease.token;
    release_done.fence = acquired.lease.fence;
    release_done.detail = released.detail;
    truth.record(release_done, false, false);
    if (released.outcome == algorithms::Outcome::kUnknown) process = truth.fresh_process();
  }
}

}  // namespace locksim::harness
