// A Jepsen-style history of one run, plus the ground truth only a simulator
// (or a careful live harness) can know: when each client *believed* it held
// the lock, in true time.
//
// Ops follow Jepsen: {:index :time :process :type :f :value}. A process whose
// op ends in :info never invokes again; the client continues under a fresh
// process id, as Jepsen does, because an :info op may still take effect at
// any later time and a process is a single thread of linearizable calls.
//
// Faults are ops too, as in Jepsen: each step of the nemesis (a fault, its
// end, a skipped fault) is one op of the :nemesis process, of type :info, at
// the true time the nemesis took it. So every tool reads one stream, and the
// checkers that judge client ops skip nemesis ops (is_client_op), as
// Jepsen's do.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "env/time.h"

namespace locksim::history {

enum class OpType { kInvoke, kOk, kFail, kInfo };

// What an op does. One enum for client and nemesis ops, so an op has one
// :f that always means something, readers validate it against one closed
// list, and a switch over it is checked by the compiler; the alternative, a
// free-form name for nemesis ops beside `f`, would leave `f` meaningless on
// them. The nemesis itself (faults/, below harness/) speaks the keywords, and
// op_f_from_string() maps them here.
//
// Nemesis ops, and their :value (targets, then parameters; strings in the
// syntax of `--fault`, see faults::FaultEvent::value()):
//   :pause ["c1" "12s"]            :resume ["c1"]
//   :crash ["redis-1"] (stays down) or ["redis-1" "5s"]   :restart ["redis-1"]
//   :partition ["c1,c3" "redis-1"] or ["c1,c3" "redis-1" "10s"]
//   :heal [] (every link) or, ending one timed partition, its sides:
//   ["c1,c3" "redis-1"] or ["c1->redis-1"]
//   :partition ["c1->redis-1"] or ["c1->redis-1" "10s"]: one way (c1 cannot reach redis-1)
//   :drift ["c4" "+50000ppm"]      :jump ["redis-1" "+20s"]
//   :delay ["c1" "redis-1" "5s" "12s"] (for 5 s, by 12 s); its end ["c1" "redis-1"]
//   :loss ["c1" "redis-1" "0.2"] or [... "0.2" "10s"]; its end sets the old rate back
//   :skip  an @holder fault that found nobody holding the lock, with the
//          skipped fault's keyword, then its value as scheduled:
//          ["pause" "@holder" "15s"]; the op's detail says why. It gets its
//          own keyword so that a reader drawing a :pause can trust that
//          something was paused.
enum class OpF {
  kAcquire,  // client ops
  kRelease,
  kPause,  // nemesis ops (is_nemesis_f)
  kResume,
  kCrash,
  kRestart,
  kPartition,
  kHeal,
  kDrift,
  kJump,
  kDelay,
  kLoss,
  kHang,  // a client's work stopped, its process running on
  kUnhang,
  kSkip,
};

const char* to_string(OpType t);  // "invoke", "ok", "fail", "info"
const char* to_string(OpF f);     // "acquire", "release", "pause", ... "skip"
// The OpF whose to_string is `name`, or nullopt.
std::optional<OpF> op_f_from_string(std::string_view name);

inline bool is_nemesis_f(OpF f) {
  return f != OpF::kAcquire && f != OpF::kRelease;
}

// The Jepsen process of nemesis ops (faults and their ends), written as
// :nemesis in EDN and "nemesis" in JSON lines. Client processes are >= 0.
inline constexpr int64_t kNemesisProcess = -1;

struct Op {
  int64_t index = 0;    // position in the history, 0-based, dense
  int64_t time_ns = 0;  // true time (the World's clock), nanoseconds since run start
  int64_t process = 0;  // Jepsen process id: >= 0 for clients, kNemesisProcess
  OpType type = OpType::kInvoke;
  OpF f = OpF::kAcquire;
  int client = 0;                 // which client (stable across process ids); clients only
  std::string token;              // the lease token, on acquire :ok and release ops
  std::optional<uint64_t> fence;  // fencing token, where the algorithm has one
  std::string detail;             // why a :fail or :info happened (a :skip: why skipped)
  // Nemesis ops only: the fault's targets, then its parameters (see OpF).
  // Client ops carry none (:value nil), as Knossos's mutex model expects.
  std::vector<std::string> value;
};

inline bool is_client_op(const Op& op) {
  return op.process != kNemesisProcess;
}

// A nemesis op (process kNemesisProcess, type :info) for a step the nemesis
// reports as keyword `f` (faults::Nemesis::StepSink); time_ns and index are
// the recorder's to set. Precondition: `f` names a nemesis OpF (a keyword
// the nemesis emits but this list lacks is a locksim bug: assertion).
Op nemesis_op(std::string_view f, std::vector<std::string> value, std::string detail);

// One line for people, in the `--fault` syntax without the time:
// "pause c1 for 12s", "crash redis-1", "partition c1,c3|redis-1 for 10s",
// "skip pause @holder for 15s (nobody holds the lock)". Precondition:
// is_nemesis_f(op.f).
std::string describe_nemesis_op(const Op& op);

// The rules every history obeys, checked op by op in order. One definition
// serves both sides of the seam: the recorder asserts them (a broken rule
// there is a locksim bug) and the readers of histories from files reject
// ops that break them (bad input, named by op index and rule). Rules:
//   1. indices are dense (op i has index i) and time never goes back;
//   2. a client op has a process >= 0 and a client f (acquire, release); a
//      nemesis op has process kNemesisProcess, type :info, a nemesis f;
//   3. a process has at most one open (invoked, not completed) op;
//   4. a completion (:ok :fail :info) matches its process's open invocation
//      (same f), so every op is completed at most once;
//   5. a client process whose op ended in :info never records again;
//   6. every op of a client process names the same client (a client goes on
//      under a fresh process after an :info op, never shares one).
// And times count from the run's start: none is negative (rule 1).
class HistoryRules {
 public:
  // "" if `op` may follow the ops admitted so far, else the broken rule in
  // one line, e.g. "process 3 completes :acquire without an open invocation
  // (rule 4: a completion matches its process's open invocation, ...)".
  std::string check(const Op& op) const;
  // Takes `op` into account. Precondition: check(op) is "".
  void admit(const Op& op);

 private:
  struct Open {
    OpF f;
    int64_t index;
    int client;  // the process's client (-1 in histories that name none: EDN)
    bool open;   // false once completed: the entry stays for the process's next op
  };
  int64_t next_index_ = 0;
  int64_t last_time_ns_ = std::numeric_limits<int64_t>::min();
  // Ordered maps: an error that lists them must not depend on hashing.
  // A process's entry is made at its first invocation and kept (not a map
  // node made and freed per op); only `open` ones are open invocations.
  std::map<int64_t, Open> open_;  // process -> its last invocation
  std::set<int64_t> retired_;     // client processes that ended in :info
};

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
// which is also what faults name. Every text and every file locksim writes
// names a client this way (history.jsonl and result.json too), so "c3" in a
// summary line is "c3" in the file beside it; only the in-memory index
// counts from 0.
std::string client_label(int client);

// The client a label names ("c3" -> 2), or nullopt for anything that is not
// "c" followed by a decimal number from 1 to INT_MAX without leading zeros.
std::optional<int> client_from_label(std::string_view label);

struct History {
  std::vector<Op> ops;  // in true-time order; index == position
  std::vector<HeldInterval> held;
  Duration run_length = Duration::zero();
};

// Appends ops and intervals while a run goes on. Not thread-safe: the
// simulation is single-threaded, and the live harness serialises calls.
// Every precondition below is asserted (env/assert.h): a recorder fed out of
// order is a locksim bug, and the history it would write is not one any
// checker could trust.
class HistoryRecorder {
 public:
  // Records an op (client or nemesis), sets its index and returns it.
  // Precondition: the op keeps the HistoryRules (time does not go back, at
  // most one open op per process, a completion matches its invocation, ...).
  int64_t record(Op op);

  // Opens a held interval for `client` at `start`. Preconditions: the client
  // holds no interval already (at most one lease at a time); `acquire_index`
  // is that client's acquire :ok op, recorded at `start`.
  void begin_hold(int client, int64_t process, TimePoint start, int64_t acquire_index);
  // Closes the client's open interval, if any. Preconditions: `end` is not
  // before its start; `release_index` is -1 or an op already recorded.
  void end_hold(int client, TimePoint end, int64_t release_index, HeldInterval::EndReason why);
  bool holding(int client) const;
  // The client's open interval, or nullptr when it holds nothing.
  const HeldInterval* open_hold(int client) const;

  // Closes every open interval at `end` (reason kRunEnd) and hands the
  // history over. Precondition: `end` is not before the last op.
  History finish(TimePoint end);

 private:
  History history_;
  HistoryRules rules_;
  std::vector<std::optional<HeldInterval>> open_;  // by client
};

}  // namespace locksim::history
