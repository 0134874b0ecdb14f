#include "harness/workload.h"

#include <algorithm>
#include <array>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "env/assert.h"

namespace locksim::harness {

namespace {

history::OpType op_type(algorithms::Outcome o) {
  switch (o) {
    case algorithms::Outcome::kOk:
      return history::OpType::kOk;
    case algorithms::Outcome::kFail:
      return history::OpType::kFail;
    case algorithms::Outcome::kUnknown:
      return history::OpType::kInfo;
  }
  return history::OpType::kInfo;
}

// A release the store did not confirm is :info, not :fail (docs/explanation/checkers.md, "The
// history encoding"). Whatever stopped it — the lease ran out by the client's
// own clock and it gave up, the key had expired or was someone else's, the
// reply was lost — the lease it ends is over for this client, and the lock
// becomes free at a time nobody records: when the lease expires on the
// store, or already did. :fail would tell Knossos's mutex model the lock is
// still held, so the next acquire of anyone (the same client included) would
// read as a violation on a run whose ground truth is clean.
history::OpType release_type(algorithms::Outcome o) {
  return o == algorithms::Outcome::kOk ? history::OpType::kOk : history::OpType::kInfo;
}

// The holder's work on the guarded resource (WorkloadParams::store): read at
// the start (counter, inventory), work (`hold`: false when the hold was cut
// short), write at the end. Why the
// read and the write are apart: a read-modify-write spread over the critical
// section is what a lock is for, and what a pause in between breaks. A read
// the store refuses (fenced out) or that times out ends the work at once: the
// holder has nothing to act on. `lease_id` is the lease's acquire :ok index.
void work_on_resource(const algorithms::Lease& lease, const std::function<bool()>& hold, int client,
                      int64_t lease_id, Workload workload, ResourceConnection& store) {
  LOCKSIM_ASSERT(workload != Workload::kNone && lease_id >= 0);
  ResourceRequest request;
  request.client = client;
  request.lease_id = lease_id;
  request.fence = lease.fence;
  int64_t read = 0;
  if (workload != Workload::kRegister) {
    request.kind = ResourceRequest::Kind::kRead;
    const ResourceReply reply = store.access(request);
    if (reply.status != ResourceReply::Status::kOk) return;
    read = reply.value;
    // Pair of the store's writes: a count never goes below zero (a sale
    // needs a positive stock, an increment a read).
    LOCKSIM_ASSERT_MSG(read >= 0, "the store handed out a negative count");
  }
  // The algorithm may cut the hold short (it learned the lock may be lost):
  // then the holder does not write.
  if (!hold()) return;
  request.kind = ResourceRequest::Kind::kWrite;
  switch (workload) {
    case Workload::kRegister:
      request.value = lease_id;  // its own value: whose write survived is visible
      break;
    case Workload::kCounter:
      request.value = read + 1;
      break;
    case Workload::kInventory:
      if (read <= 0) return;  // sold out: nothing to sell
      request.value = read - 1;
      break;
    case Workload::kNone:
      return;
  }
  (void)store.access(request);
}

// One client's loop and what it must never get wrong: a client holds at
// most one lease, uses a lease only after its acquire returned :ok, and
// releases each lease at most once; its ops are recorded in time order under
// a process id that is never reused after an :info.
class ClientLoop {
 public:
  ClientLoop(Env& env, algorithms::LockAlgorithm& algorithm, int client,
             const WorkloadParams& params, Truth& truth, int64_t process)
      : env_(env),
        algorithm_(algorithm),
        client_(client),
        params_(params),
        truth_(truth),
        process_(process) {}

  // One acquire; on :ok, the critical section and the release.
  void cycle() {
    LOCKSIM_ASSERT_MSG(!held_, "a client acquires while it holds a lease");
    record(op(history::OpType::kInvoke, history::OpF::kAcquire), false, false);
    const algorithms::AcquireResult acquired = algorithm_.acquire(env_, params_.resource);
    const bool ok = acquired.outcome == algorithms::Outcome::kOk;
    history::Op done = op(op_type(acquired.outcome), history::OpF::kAcquire);
    done.detail = acquired.detail;
    if (ok) {
      // Pair of LockAlgorithm::acquire: an :ok hands over a lease on the
      // resource asked for, with the token it wrote.
      LOCKSIM_ASSERT_MSG(
          acquired.lease.resource == params_.resource && !acquired.lease.token.empty(),
          "an :ok acquire without a lease on the resource");
      done.token = acquired.lease.token;
      done.fence = acquired.lease.fence;
      held_ = acquired.lease;
    }
    // The ground-truth interval opens in the same step as the :ok op, so no
    // other client's op can fall between the two.
    const int64_t index = record(std::move(done), ok, false);
    if (ok) {
      lease_id_ = index;
      // Renewed in the background: no end the holder knows of.
      const bool endless = held_->renewal != nullptr || held_->validity >= Duration::max();
      truth_.lease_believed(client_, env_.now() + (endless ? Duration::max() : held_->validity));
    }
    if (acquired.outcome == algorithms::Outcome::kUnknown) next_process();
    if (!ok) {
      env_.sleep(params_.retry_pause);
      return;
    }
    hold();
    release();
    // A quiet lock: only a workload that asks for gaps draws one, so the
    // default workload's client streams are what they always were.
    if (params_.idle_max > Duration::zero()) {
      env_.sleep(Duration{random_between(env_, params_.idle_min.ns, params_.idle_max.ns)});
    }
  }

 private:
  history::Op op(history::OpType type, history::OpF f) const {
    history::Op o;
    o.process = process_;
    o.client = client_;
    o.type = type;
    o.f = f;
    return o;
  }

  // Records through Truth and checks what the loop relies on: true time and
  // the history's index only move forward.
  int64_t record(history::Op o, bool begin_hold, bool end_hold) {
    const TimePoint now = truth_.true_now();
    LOCKSIM_ASSERT_MSG(now >= last_time_, "true time went back between a client's ops");
    const int64_t index = truth_.record(std::move(o), begin_hold, end_hold);
    LOCKSIM_ASSERT_MSG(index > last_index_, "a client's ops recorded out of order");
    last_time_ = now;
    last_index_ = index;
    return index;
  }

  // An :info op's process never invokes again (Jepsen).
  void next_process() {
    const int64_t fresh = truth_.fresh_process();
    LOCKSIM_ASSERT_MSG(fresh != process_ && fresh >= 0, "a Jepsen process id reused");
    process_ = fresh;
  }

  // The critical section: the client believes it holds the lock throughout.
  void hold() {
    LOCKSIM_ASSERT(held_.has_value());
    const Duration hold{random_between(env_, params_.hold_min.ns, params_.hold_max.ns)};
    LOCKSIM_ASSERT(hold >= Duration::zero() && hold <= params_.hold_max);
    ResourceConnection* store =
        params_.store.workload == Workload::kNone ? nullptr : truth_.resource(client_);
    if (store != nullptr) {
      work_on_resource(
          *held_, [&] { return timed_hold(hold); }, client_, lease_id_, params_.store.workload,
          *store);
      return;
    }
    timed_hold(hold);
  }

  // Works for `hold` of true time (the work's own length). A careful client
  // stops where its own clock reads the end of the lease's validity, which
  // counts from when the acquire returned (Redlock's rule: validity = ttl -
  // elapsed - drift, the time left after the acquire took `elapsed`),
  // checking that clock as it goes: a clock running slow keeps it working
  // past the validity in true time, which is what a drifting client clock
  // does to Redlock. Without a clock fault the first step is the whole cut
  // hold, so such a run is what it was before the clock was checked. False
  // when the algorithm cut the hold short (it learned the lock may be lost).
  bool timed_hold(Duration hold) {
    if (!params_.hold_within_validity) return hold_step(hold);
    const TimePoint end_local = env_.now() + held_->validity;
    Duration remaining = hold;
    // Each check's step ends at the clock's reading of the end, so a clock at
    // rate r leaves |1 - r| of the last step: a few checks close the gap to
    // below a millisecond. Bounded all the same (Tiger Style).
    for (int check = 0; check < kValidityChecksMax && remaining > Duration::zero(); ++check) {
      const Duration left = end_local - env_.now();
      if (left < Duration::millis(1)) break;
      const Duration step = std::min(remaining, left);
      if (!hold_step(step)) return false;
      remaining -= step;
    }
    LOCKSIM_ASSERT(remaining >= Duration::zero() && remaining <= hold);
    return true;
  }

  static constexpr int kValidityChecksMax = 16;

  // One stretch of the algorithm's hold; false when it told the holder the
  // lock may be lost, which the truth keeps (the holder was told).
  bool hold_step(Duration d) {
    if (algorithm_.hold(env_, *held_, d)) return true;
    truth_.lease_doubted(client_);
    return false;
  }

  void release() {
    LOCKSIM_ASSERT_MSG(held_.has_value(), "a release without a held lease");
    const algorithms::Lease lease = std::move(*held_);
    held_.reset();  // at most once: whatever the outcome, it is not ours to release again
    history::Op invoke = op(history::OpType::kInvoke, history::OpF::kRelease);
    invoke.token = lease.token;
    invoke.fence = lease.fence;
    record(std::move(invoke), false, true);
    const algorithms::ReleaseResult released = algorithm_.release(env_, lease);
    history::Op done = op(release_type(released.outcome), history::OpF::kRelease);
    done.token = lease.token;
    done.fence = lease.fence;
    done.detail = released.detail;
    const history::OpType outcome = done.type;
    record(std::move(done), false, false);
    if (outcome == history::OpType::kInfo) next_process();
  }

  Env& env_;
  algorithms::LockAlgorithm& algorithm_;
  const int client_;
  const WorkloadParams& params_;
  Truth& truth_;
  int64_t process_;
  std::optional<algorithms::Lease> held_;  // set from an :ok acquire to its release
  int64_t lease_id_ = -1;                  // index of held_'s acquire :ok op
  TimePoint last_time_{};
  int64_t last_index_ = -1;
};

}  // namespace

std::array<history::Op, 2> abandoned_release(int client, int64_t process, const std::string& why) {
  history::Op invoke;
  invoke.process = process;
  invoke.client = client;
  invoke.type = history::OpType::kInvoke;
  invoke.f = history::OpF::kRelease;
  history::Op info = invoke;
  info.type = history::OpType::kInfo;
  info.detail = why + ": holding the lock; the lease is abandoned and frees when it expires";
  return {invoke, info};
}

void run_client(Env& env, algorithms::LockAlgorithm& algorithm, int client,
                const WorkloadParams& params, Truth& truth, int64_t first_process) {
  // Run validation rejects these as bad input (exit 2) before any client starts.
  LOCKSIM_ASSERT(params.hold_min >= Duration::zero() && params.hold_min <= params.hold_max);
  LOCKSIM_ASSERT(params.retry_pause >= Duration::zero());
  LOCKSIM_ASSERT(params.idle_min >= Duration::zero() && params.idle_min <= params.idle_max);
  LOCKSIM_ASSERT_MSG(!params.draw, "a drawn workload is resolved when the run is prepared");
  LOCKSIM_ASSERT(client >= 0 && client < params.clients);
  ClientLoop loop(env, algorithm, client, params, truth,
                  first_process >= 0 ? first_process : client);
  int64_t n = 0;
  for (; n < params.max_ops_per_client && !truth.stopping(); ++n) loop.cycle();
  if (n == params.max_ops_per_client && !truth.stopping()) {
    // The run goes on without this client's ops: not the run asked for, so a
    // client error (the verdict unknown), never a silent stop. A 168 h run
    // with no hold reached it at 33 minutes and said OK.
    throw std::runtime_error(
        "stopped after " + std::to_string(params.max_ops_per_client) +
        " acquire cycles, the bound each client has, before the run's end: give a longer --hold "
        "or --retry-pause, or a shorter --duration");
  }
}

}  // namespace locksim::harness
