#include "harness/workload.h"

#include <algorithm>
#include <array>
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

// A release the store did not confirm is :info, not :fail (README, "The
// history encoding"). Whatever stopped it — the lease ran out by the client's
// own clock and it gave up, the key had expired or was someone else's, the
// reply was lost — the lease it ends is over for this client, and the lock
// becomes free at a time nobody records: when the lease expires on the
// store, or already did. :fail would tell Knossos's mutex model the lock is
// still held, so the next acquire of anyone (the same client included) would
// read as a violation on a run whose ground truth is clean.
OpType release_type(algorithms::Outcome o) {
  return o == algorithms::Outcome::kOk ? OpType::kOk : OpType::kInfo;
}

}  // namespace

std::array<Op, 2> abandoned_release(int client, int64_t process, const std::string& why) {
  Op invoke;
  invoke.process = process;
  invoke.client = client;
  invoke.type = OpType::kInvoke;
  invoke.f = OpF::kRelease;
  Op info = invoke;
  info.type = OpType::kInfo;
  info.detail = why + ": holding the lock; the lease is abandoned and frees when it expires";
  return {invoke, info};
}

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
    env.sleep(hold);

    Op release = op(OpType::kInvoke, OpF::kRelease);
    release.token = acquired.lease.token;
    release.fence = acquired.lease.fence;
    truth.record(release, false, true);
    const algorithms::ReleaseResult released = algorithm.release(env, acquired.lease);
    Op release_done = op(release_type(released.outcome), OpF::kRelease);
    release_done.token = acquired.lease.token;
    release_done.fence = acquired.lease.fence;
    release_done.detail = released.detail;
    truth.record(release_done, false, false);
    // After :info a Jepsen process never invokes again (its op may still be running).
    if (release_done.type == OpType::kInfo) process = truth.fresh_process();
  }
}

}  // namespace locksim::harness
