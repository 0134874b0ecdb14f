// A Jepsen-style history of one run, plus the ground truth only a simulator
// (or a careful live harness) can know: when each client *believed* it held
// the lock, in true time.
//
// Ops follow Jepsen: {:index :time :process :type :f :value}. A process whose
// op ends in :info never invokes again; the client continues under a fresh
// process id, as Jepsen does, because an :info op may still take effect at
// any later time and a process is a single thread of linearizable calls.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "env/time.h"

namespace locksim::harness {

enum class OpType { kInvoke, kOk, kFail, kInfo };
enum class OpF { kAcquire, kRelease };

const char* to_string(OpType t);  // "invoke", "ok", "fail", "info"
const char* to_string(OpF f);     // "acquire", "release"

// The Jepsen process of nemesis ops (faults and their ends), written as
// :nemesis in EDN. Checkers that judge client ops skip these, as Jepsen's do.
inline constexpr int64_t kNemesisProcess = -1;

struct Op {
  int64_t index = 0;    // position in the history, 0-based, dense
  int64_t time_ns = 0;  // true time (the World's clock), nanoseconds since run start
  int64_t process = 0;  // Jepsen process id
  OpType type = OpType::kInvoke;
  OpF f = OpF::kAcquire;
  int client = 0;                 // which client (stable across process ids)
  std::string token;              // the lease token, on acquire :ok and release ops
  std::optional<uint64_t> fence;  // fencing token, where the algorithm has one
  std::string detail;             // why a :fail or :info happened
};

inline bool is_client_op(const Op& op) {
  return op.process != kNemesisProcess;
}

// One interval in which a client believed it held the lock, in true time.
// Starts when acquire returned :ok to the client; ends when the client invoked
// release, crashed, or the run ended. Half-open: [start, end).
struct HeldInterval {
  int client = 0;
  int64_t process = 0;
  TimePoint start;
  TimePoint end;
  int64_t acquire_index = -1;  // index of the acquire :ok op
  int64_t release_index = -1;  // index of the release :invoke op, -1 if none
  enum class EndReason { kRelease, kCrash, kRunEnd } end_reason = EndReason::kRelease;
};

const char* to_string(HeldInterval::EndReason r);  // "release", "crash", "run-end"

// How people see client `client` (0-based): "c1" for 0, the name of its node,
// which is also what faults name.
std::string client_label(int client);

struct History {
  std::vector<Op> ops;  // in true-time order; index == position
  std::vector<HeldInterval> held;
  Duration run_length = Duration::zero();
};

// Appends ops and intervals while a run goes on. Not thread-safe: the
// simulation is single-threaded, and the live harness serialises calls.
class HistoryRecorder {
 public:
  // Records an op and returns its index. Precondition: time does not go back.
  int64_t record(Op op);

  // Opens a held interval for `client` at `start` (acquire :ok index given).
  void begin_hold(int client, int64_t process, TimePoint start, int64_t acquire_index);
  // Closes the client's open interval, if any.
  void end_hold(int client, TimePoint end, int64_t release_index, HeldInterval::EndReason why);
  bool holding(int client) const;
  // The client's open interval, or nullptr when it holds nothing.
  const HeldInterval* open_hold(int client) const;

  // Closes every open interval at `end` (reason kRunEnd) and hands the history over.
  History finish(TimePoint end);

 private:
  History history_;
  std::vector<std::optional<HeldInterval>> open_;  // by client
};

}  // namespace locksim::harness
