#include "live/live_runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

#include "env/assert.h"
#include "live/client_freeze.h"
#include "live/live_env.h"
#include "live/owned_processes.h"
#include "live/run_end.h"

namespace locksim::live {

namespace {

// The history of the live run an interrupt cut, for
// interrupted_live_history(): one run at a time per process.
class CutSlot {
 public:
  void set(history::History h) {
    const std::lock_guard<std::mutex> lock(mutex_);
    history_ = std::move(h);
  }
  std::optional<history::History> take() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(history_, std::nullopt);
  }

 private:
  std::mutex mutex_;
  std::optional<history::History> history_;  // guarded by mutex_
};
CutSlot& cut_slot() {
  static CutSlot slot;
  return slot;
}

// The life a client thread runs in (LiveTruth::begin_life): what record()
// holds against the client's current one.
thread_local uint64_t t_life = 0;

// Truth for threads: one mutex serialises the recorder, and the time is read
// inside it, so index order and time order agree.
class LiveTruth : public harness::Truth, public LiveRunView {
 public:
  LiveTruth(int clients, Duration run_length)
      : start_(std::chrono::steady_clock::now()),
        run_length_(run_length),
        end_ns_((TimePoint{} + run_length).ns),
        next_process_(clients),
        open_invoke_(static_cast<size_t>(clients)),
        lives_(static_cast<size_t>(clients), 0),
        abandoned_(static_cast<size_t>(clients), false) {}

  // Where the run ends on the steady clock, for the client threads' sleeps
  // (live/run_end.h).
  std::chrono::steady_clock::time_point steady_end() const {
    return start_ + std::chrono::nanoseconds(run_length_.ns);
  }

  // The calling thread runs client `client`'s current life from now on.
  void begin_life(int client) {
    const std::lock_guard<std::mutex> lock(mutex_);
    t_life = lives_.at(static_cast<size_t>(client));
  }

  TimePoint true_now() override {
    const auto elapsed = std::chrono::steady_clock::now() - start_;
    return TimePoint::from_ns(
        std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count());
  }

  bool stopping() override {
    return aborted_.load(std::memory_order_relaxed) || true_now() >= end();
  }

  int64_t fresh_process() override {
    const int64_t process = next_process_.fetch_add(1);
    // Above every client's first process: ids never collide.
    LOCKSIM_ASSERT(process >= static_cast<int64_t>(open_invoke_.size()));
    return process;
  }

  int64_t record(history::Op op, bool begin_hold, bool end_hold) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    // A crashed life records nothing more: the crash completed its op.
    if (t_life != lives_.at(static_cast<size_t>(op.client))) throw ClientCrashed{};
    // Past the run's end nothing more is recorded, as the simulation's World
    // stops there: the client stops where it stands and its op stays open
    // (a hold open ends at the run's end, in finish()).
    const TimePoint t = true_now();
    if (t >= end()) throw ClientAbandoned{};
    return record_locked(std::move(op), begin_hold, end_hold, t);
  }

  // Client `client` died of an exception: complete its in-flight op as :info
  // (its effect is unknown, as for a crashed Jepsen process) and end its hold.
  // (`why` empty: a crash fault, worded as the simulation words it.)
  void crash(int client, const std::string& why) {
    const std::lock_guard<std::mutex> lock(mutex_);
    crash_locked(client, why);
  }
  void crash_locked(int client, const std::string& why) {
    LOCKSIM_ASSERT(client >= 0 && static_cast<size_t>(client) < open_invoke_.size());
    const TimePoint t = true_now();
    if (t >= end()) {
      // After the run's end: recorded as the run's end leaves it (its op
      // open, its hold ended at the end), as a simulated client cancelled there.
      abandoned_.at(static_cast<size_t>(client)) = true;
      return;
    }
    const std::string detail = why.empty() ? "client crashed" : "client crashed: " + why;
    auto& open = open_invoke_[static_cast<size_t>(client)];
    if (open.has_value()) {
      history::Op info = *open;
      info.type = history::OpType::kInfo;
      info.detail = detail;
      record_locked(std::move(info), false, false, t);
    } else if (const history::HeldInterval* held = recorder_.open_hold(client)) {
      for (const history::Op& op : harness::abandoned_release(client, held->process, detail)) {
        record_locked(op, false, false, t);
      }
    }
    LOCKSIM_ASSERT(!open.has_value());
    recorder_.end_hold(client, t, -1, history::HeldInterval::EndReason::kCrash);
  }

  // LiveRunView, for the nemesis's thread.
  void client_crashed(const std::string& client) override {
    int index = -1;
    for (size_t c = 0; c < lives_.size(); ++c) {
      if (history::client_label(static_cast<int>(c)) == client) index = static_cast<int>(c);
    }
    LOCKSIM_ASSERT_MSG(index >= 0, "check_live_faults names only the run's clients");
    // One step under the lock: no op of the dying life lands after its crash.
    const std::lock_guard<std::mutex> lock(mutex_);
    crash_locked(index, "");
    ++lives_[static_cast<size_t>(index)];
  }
  Duration elapsed() override { return true_now() - TimePoint{}; }
  std::string holder() override {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (size_t client = 0; client < open_invoke_.size(); ++client) {
      if (recorder_.open_hold(static_cast<int>(client)) != nullptr) {
        return history::client_label(static_cast<int>(client));
      }
    }
    return "";
  }
  void record_nemesis(std::string_view f, std::vector<std::string> value,
                      std::string_view note) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    const TimePoint t = true_now();
    // A step after the run's end (a resume, a heal) still acts, so that the
    // clients can return, but the history ends at the run's end.
    if (t >= end()) return;
    history::Op op = history::nemesis_op(f, std::move(value), std::string(note));
    LOCKSIM_ASSERT_MSG(t >= last_recorded_, "live history time went back");
    last_recorded_ = t;
    op.time_ns = t.ns;
    const int64_t index = recorder_.record(std::move(op));
    LOCKSIM_ASSERT(index == next_index_);
    ++next_index_;
  }
  void nemesis_error(const std::string& what) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    nemesis_errors_.push_back("nemesis: " + what);
  }
  std::vector<std::string> take_nemesis_errors() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return std::move(nemesis_errors_);
  }

  // LiveRunView: the nemesis took its steps at 0 s (or ended): clients may start.
  void nemesis_ready() override {
    const std::lock_guard<std::mutex> lock(mutex_);
    nemesis_ready_ = true;
    nemesis_ready_changed_.notify_all();
  }
  // Bounded: the nemesis's thread calls nemesis_ready() before its first
  // wait, and start_nemesis calls it again when that thread ends.
  void wait_nemesis_ready() {
    std::unique_lock<std::mutex> lock(mutex_);
    nemesis_ready_changed_.wait(lock, [this] { return nemesis_ready_; });
  }

  // Makes every client stop at its next step (used when the run cannot start).
  void abort() { aborted_.store(true, std::memory_order_relaxed); }

  // Client `client` was abandoned at the run's end (hung, asleep, or with a
  // result that came after it): its op in flight stays open in the history,
  // as a cancelled simulated client's does.
  void abandoned(int client) {
    const std::lock_guard<std::mutex> lock(mutex_);
    abandoned_.at(static_cast<size_t>(client)) = true;
  }

  // Precondition: every client thread has returned or crash()ed.
  history::History finish() {
    const std::lock_guard<std::mutex> lock(mutex_);
    // Each client completed its last op, or crash() completed it as :info,
    // or it was abandoned at the run's end.
    for (size_t c = 0; c < open_invoke_.size(); ++c) {
      LOCKSIM_ASSERT_MSG(!open_invoke_[c].has_value() || abandoned_[c],
                         "a live op left without a completion");
    }
    // The run ends at its length (earlier only when every client ran out of
    // ops): a hold still open counts as held until then, as in the simulation.
    return recorder_.finish(std::min(true_now(), end()));
  }

  // An interrupt (the watcher's cut, live/owned_processes.h): the run ends
  // now, and what it recorded so far is kept for interrupted_live_history(),
  // finished as finish() would finish it at this instant.
  void cut_for_interrupt() {
    const std::lock_guard<std::mutex> lock(mutex_);
    const TimePoint t = std::max(std::min(true_now(), end()), last_recorded_);
    end_ns_.store(t.ns);
    aborted_.store(true);
    history::HistoryRecorder copy = recorder_;
    cut_slot().set(copy.finish(t));
  }

 private:
  // `t`: true_now() read under the mutex, so index order and time order agree.
  int64_t record_locked(history::Op op, bool begin_hold, bool end_hold, TimePoint t) {
    LOCKSIM_ASSERT_MSG(t < end(), "a live op recorded after the run's end");
    LOCKSIM_ASSERT_MSG(t >= last_recorded_, "live history time went back");
    last_recorded_ = t;
    op.time_ns = t.ns;
    const int client = op.client;
    const int64_t process = op.process;
    LOCKSIM_ASSERT_MSG(client >= 0 && static_cast<size_t>(client) < open_invoke_.size(),
                       "an op from a client this run does not have");
    // Holds open at an acquire :ok and close at a release :invoke (Truth's contract).
    LOCKSIM_ASSERT(!begin_hold ||
                   (op.type == history::OpType::kOk && op.f == history::OpF::kAcquire));
    LOCKSIM_ASSERT(!end_hold ||
                   (op.type == history::OpType::kInvoke && op.f == history::OpF::kRelease));
    track_open(op);
    const int64_t index = recorder_.record(std::move(op));
    LOCKSIM_ASSERT(index == next_index_);  // dense, as Jepsen's :index
    ++next_index_;
    if (begin_hold) recorder_.begin_hold(client, process, t, index);
    if (end_hold) recorder_.end_hold(client, t, index, history::HeldInterval::EndReason::kRelease);
    return index;
  }

  // At most one op open per client: an :invoke opens one, and the next op of
  // that client completes exactly it (same process, same :f).
  void track_open(const history::Op& op) {
    auto& open = open_invoke_[static_cast<size_t>(op.client)];
    if (op.type == history::OpType::kInvoke) {
      LOCKSIM_ASSERT_MSG(!open.has_value(), "a live client invoked with an op still open");
      open = op;
      return;
    }
    LOCKSIM_ASSERT_MSG(open.has_value(), "a live completion without its invoke");
    LOCKSIM_ASSERT_MSG(open->process == op.process && open->f == op.f,
                       "a live completion does not match its invoke");
    open.reset();
  }

  const std::chrono::steady_clock::time_point start_;
  const Duration run_length_;
  // The run's end: nothing is recorded at or after it. Moves only earlier,
  // to an interrupt's instant (cut_for_interrupt, under mutex_).
  std::atomic<int64_t> end_ns_;
  TimePoint end() const { return TimePoint::from_ns(end_ns_.load()); }
  std::atomic<int64_t> next_process_;
  std::atomic<bool> aborted_{false};
  std::mutex mutex_;
  history::HistoryRecorder recorder_;                    // guarded by mutex_
  std::vector<std::optional<history::Op>> open_invoke_;  // by client; guarded by mutex_
  TimePoint last_recorded_{};                            // guarded by mutex_
  std::vector<std::string> nemesis_errors_;              // guarded by mutex_
  int64_t next_index_ = 0;                               // guarded by mutex_
  std::vector<uint64_t> lives_;  // by client: crashes so far; guarded by mutex_
  std::vector<bool> abandoned_;  // by client: hung at the end; guarded by mutex_
  bool nemesis_ready_ = false;   // guarded by mutex_
  std::condition_variable nemesis_ready_changed_;
};

// The nemesis's thread (none without options.nemesis): it runs until `done`
// and reports what it throws as a nemesis error.
std::thread start_nemesis(const LiveOptions& options, LiveTruth& truth,
                          const std::atomic<bool>& done) {
  if (!options.nemesis) return {};
  return std::thread([&options, &truth, &done] {
    try {
      options.nemesis(truth, done);
    } catch (const std::exception& e) {
      truth.nemesis_error(e.what());
    }
    truth.nemesis_ready();  // a nemesis that threw first must not hold the clients back
  });
}

// While a run is in progress, an interrupt cuts it (live/owned_processes.h).
class InterruptCut {
 public:
  explicit InterruptCut(LiveTruth& truth) {
    set_interrupt_cut([&truth] { truth.cut_for_interrupt(); });
  }
  ~InterruptCut() { set_interrupt_cut(nullptr); }
  InterruptCut(const InterruptCut&) = delete;
  InterruptCut& operator=(const InterruptCut&) = delete;
};

// run_live's contract for errors: into options.errors when set, else thrown.
void hand_over(std::vector<std::string> errors, const LiveOptions& options) {
  if (options.errors != nullptr) {
    options.errors->insert(options.errors->end(), errors.begin(), errors.end());
  } else if (!errors.empty()) {
    std::string message = "run_live: " + std::to_string(errors.size()) + " client(s) threw:";
    for (const std::string& e : errors) message += " [" + e + "]";
    throw std::runtime_error(message);
  }
}

// What each client's thread runs: its lives, one after another, and its
// error, if it throws one, kept for hand_over.
struct ClientThreads {
  algorithms::LockAlgorithm& algorithm;
  const harness::WorkloadParams& params;
  const std::vector<std::pair<std::string, int>>& servers;
  uint64_t seed;
  const LiveOptions& options;
  LiveTruth& truth;
  std::mutex errors_mutex;
  std::vector<std::string> errors;  // guarded by errors_mutex

  // One life of a client: false when it ended in a crash fault.
  bool live_once(int client, int64_t process) {
    truth.begin_life(client);
    try {
      const std::unique_ptr<Env> env =
          options.make_env
              ? options.make_env(client)
              : std::make_unique<LiveEnv>(client, servers, options.command_timeout, seed);
      harness::run_client(*env, algorithm, client, params, truth, process);
      return true;
    } catch (const ClientCrashed&) {
      return false;  // the nemesis recorded the crash when it came
    } catch (const ClientAbandoned&) {
      truth.abandoned(client);  // hung at the run's end: its op stays open
      return true;
    }
  }

  void run(int client) {
    set_thread_run_end(truth.steady_end());
    std::string why;
    try {
      int64_t process = client;
      // Each crash fault ends a life; its restart starts the next one under
      // a fresh process, as the simulation's client node restarts (bounded
      // by the schedule's crashes and the run's end).
      while (!live_once(client, process)) {
        const std::shared_ptr<ClientLife>& life = options.lives.at(static_cast<size_t>(client));
        if (!life->wait_restarted([this] { return truth.stopping(); })) return;
        process = truth.fresh_process();
      }
      return;
    } catch (const std::exception& e) {
      why = e.what();
    } catch (...) {
      why = "unknown exception";
    }
    // Reporting must not throw out of the thread either.
    try {
      truth.crash(client, why);
      const std::lock_guard<std::mutex> lock(errors_mutex);
      errors.push_back("c" + std::to_string(client) + ": " + why);
    } catch (...) {
    }
  }
};

}  // namespace

std::optional<history::History> interrupted_live_history() {
  return cut_slot().take();
}

history::History run_live(algorithms::LockAlgorithm& algorithm,
                          const harness::WorkloadParams& params,
                          const std::vector<std::pair<std::string, int>>& servers,
                          Duration run_length, uint64_t seed, const LiveOptions& options) {
  if (servers.empty() && !options.make_env) throw std::invalid_argument("run_live: no servers");
  if (params.clients < 1) throw std::invalid_argument("run_live: clients must be >= 1");

  LiveTruth truth(params.clients, run_length);
  const InterruptCut interrupt_cut(truth);
  ClientThreads clients{.algorithm = algorithm,
                        .params = params,
                        .servers = servers,
                        .seed = seed,
                        .options = options,
                        .truth = truth,
                        .errors_mutex = {},
                        .errors = {}};
  auto client_main = [&clients](int client) { clients.run(client); };

  std::atomic<bool> clients_done{false};
  std::thread nemesis;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(params.clients));
  try {
    // The nemesis first: a fault at 0 s comes before the clients' first step.
    nemesis = start_nemesis(options, truth, clients_done);
    if (nemesis.joinable()) truth.wait_nemesis_ready();
    for (int client = 0; client < params.clients; ++client)
      threads.emplace_back(client_main, client);
  } catch (...) {
    // Could not start every client: stop the ones running, then report.
    truth.abort();
    for (std::thread& t : threads) t.join();
    clients_done.store(true);
    if (nemesis.joinable()) nemesis.join();
    throw;
  }
  for (std::thread& t : threads) t.join();
  LOCKSIM_ASSERT(threads.size() == static_cast<size_t>(params.clients));
  clients_done.store(true);
  if (nemesis.joinable()) nemesis.join();
  std::vector<std::string> errors = std::move(clients.errors);
  for (std::string& e : truth.take_nemesis_errors()) errors.push_back(std::move(e));

  history::History history = truth.finish();
  hand_over(std::move(errors), options);
  return history;
}

}  // namespace locksim::live
