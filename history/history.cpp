#include "history/history.h"

#include <iterator>

#include <fmt/format.h>

#include "env/assert.h"

namespace locksim::history {

namespace {

// In OpF order: to_string and op_f_from_string read the one list.
constexpr const char* kFNames[] = {"acquire", "release",   "pause", "resume", "crash",
                                   "restart", "partition", "heal",  "drift",  "jump",
                                   "delay",   "loss",      "hang",  "unhang", "skip"};
static_assert(std::size(kFNames) == static_cast<size_t>(OpF::kSkip) + 1, "every OpF has a keyword");

// `value[i]`, or "?" when a foreign history left it out (describe must not throw).
const std::string& at(const std::vector<std::string>& value, size_t i) {
  static const std::string kMissing = "?";
  return i < value.size() ? value[i] : kMissing;
}

std::string process_text(int64_t process) {
  return process == kNemesisProcess ? "the nemesis" : fmt::format("process {}", process);
}

}  // namespace

const char* to_string(OpType t) {
  switch (t) {
    case OpType::kInvoke:
      return "invoke";
    case OpType::kOk:
      return "ok";
    case OpType::kFail:
      return "fail";
    case OpType::kInfo:
      return "info";
  }
  return "?";
}

const char* to_string(OpF f) {
  const auto i = static_cast<size_t>(f);
  return i < std::size(kFNames) ? kFNames[i] : "?";
}

std::optional<OpF> op_f_from_string(std::string_view name) {
  for (size_t i = 0; i < std::size(kFNames); ++i) {
    if (name == kFNames[i]) return static_cast<OpF>(i);
  }
  return std::nullopt;
}

const char* to_string(HeldInterval::EndReason r) {
  switch (r) {
    case HeldInterval::EndReason::kRelease:
      return "release";
    case HeldInterval::EndReason::kCrash:
      return "crash";
    case HeldInterval::EndReason::kRunEnd:
      return "run-end";
  }
  return "?";
}

std::string client_label(int client) {
  LOCKSIM_ASSERT(client >= 0);
  return "c" + std::to_string(client + 1);
}

std::optional<int> client_from_label(std::string_view label) {
  constexpr size_t kDigitsMax = 10;  // INT_MAX has 10 digits
  if (label.size() < 2 || label.size() > 1 + kDigitsMax || label[0] != 'c' || label[1] == '0') {
    return std::nullopt;
  }
  int64_t n = 0;
  for (const char ch : label.substr(1)) {
    if (ch < '0' || ch > '9') return std::nullopt;
    n = n * 10 + (ch - '0');
  }
  if (n > std::numeric_limits<int>::max()) return std::nullopt;
  const int client = static_cast<int>(n - 1);
  LOCKSIM_ASSERT(client_label(client) == label);  // the pair reads back what it writes
  return client;
}

Op nemesis_op(std::string_view f, std::vector<std::string> value, std::string detail) {
  const std::optional<OpF> op_f = op_f_from_string(f);
  LOCKSIM_ASSERT_MSG(op_f.has_value() && is_nemesis_f(*op_f),
                     "the nemesis reports only keywords OpF lists as nemesis ops");
  Op op;
  op.process = kNemesisProcess;
  op.type = OpType::kInfo;
  op.f = *op_f;
  op.value = std::move(value);
  op.detail = std::move(detail);
  return op;
}

std::string describe_nemesis_op(const Op& op) {
  LOCKSIM_ASSERT(is_nemesis_f(op.f));
  const std::vector<std::string>& v = op.value;
  const std::string f = to_string(op.f);
  switch (op.f) {
    case OpF::kPause:
      return fmt::format("pause {} for {}", at(v, 0), at(v, 1));
    case OpF::kDelay:
      if (v.size() < 4) return fmt::format("delay {}|{} ends", at(v, 0), at(v, 1));
      return fmt::format("delay {}|{} for {} by {}", at(v, 0), at(v, 1), at(v, 2), at(v, 3));
    case OpF::kLoss:
      return fmt::format("loss {}|{} {}", at(v, 0), at(v, 1), at(v, 2)) +
             (v.size() > 3 ? " for " + v[3] : "");
    case OpF::kHeal:
      // [] heals every link; the end of one partition names its sides.
      if (v.empty()) return "heal";
      return v.size() == 1 ? "heal " + v[0] : fmt::format("heal {}|{}", v[0], at(v, 1));
    case OpF::kCrash:
    case OpF::kHang:
    case OpF::kPartition: {
      // crash or hang [node (for D)], partition [a b (for D)] or one way
      // [a->b (for D)]: the optional delay is last.
      const bool one_way = op.f == OpF::kPartition && at(v, 0).find("->") != std::string::npos;
      const size_t targets = op.f != OpF::kPartition || one_way ? 1 : 2;
      std::string out = f + " " + at(v, 0);
      if (targets == 2) out += "|" + at(v, 1);
      if (v.size() > targets) out += " for " + v[targets];
      return out;
    }
    case OpF::kSkip: {
      Op skipped = op;
      skipped.value.clear();
      const std::optional<OpF> g = op_f_from_string(at(v, 0));
      if (!g || !is_nemesis_f(*g) || *g == OpF::kSkip) return "skip " + at(v, 0);
      skipped.f = *g;
      skipped.value.assign(v.begin() + 1, v.end());
      std::string out = "skip " + describe_nemesis_op(skipped);
      if (!op.detail.empty()) out += " (" + op.detail + ")";
      return out;
    }
    default: {
      // resume, restart, drift, jump: the keyword, then the value.
      std::string out = f;
      for (const std::string& s : v) out += " " + s;
      return out;
    }
  }
}

std::string HistoryRules::check(const Op& op) const {
  if (op.index != next_index_) {
    return fmt::format("op has index {}, expected {} (rule 1: indices are dense and in order)",
                       op.index, next_index_);
  }
  if (op.time_ns < last_time_ns_) {
    return fmt::format("time goes back ({} after {}) (rule 1: ops are in true-time order)",
                       op.time_ns, last_time_ns_);
  }
  if (op.time_ns < 0) {
    return fmt::format("time {} is before the run began (rule 1: times count from 0)", op.time_ns);
  }
  if (is_client_op(op)) {
    if (op.process < 0) {
      return fmt::format("client op has process {} (rule 2: client processes are >= 0)",
                         op.process);
    }
    if (is_nemesis_f(op.f)) {
      return fmt::format("process {} records :{} (rule 2: only the nemesis does)", op.process,
                         to_string(op.f));
    }
    if (retired_.count(op.process) != 0) {
      return fmt::format(
          "process {} records again after an :info op (rule 5: a process whose op ended in :info "
          "never records again; the client continues under a fresh process)",
          op.process);
    }
  } else if (!is_nemesis_f(op.f) || op.type != OpType::kInfo) {
    return fmt::format(
        "the nemesis records :{} :{} (rule 2: nemesis ops are :info with a fault keyword)",
        to_string(op.type), to_string(op.f));
  } else {
    return "";  // a nemesis op never opens or completes anything
  }
  auto open = open_.find(op.process);
  if (open != open_.end() && open->second.client != op.client) {
    return fmt::format("{} is {}'s (op {}), but op {} names {} (rule 6: a process is one client's)",
                       process_text(op.process), client_label(open->second.client),
                       open->second.index, op.index, client_label(op.client));
  }
  if (open != open_.end() && !open->second.open) open = open_.end();
  if (op.type == OpType::kInvoke) {
    if (open == open_.end()) return "";
    return fmt::format(
        "{} invokes :{} while its :{} (op {}) is still open (rule 3: at most one open op per "
        "process)",
        process_text(op.process), to_string(op.f), to_string(open->second.f), open->second.index);
  }
  if (open == open_.end()) {
    return fmt::format(
        "{} completes :{} without an open invocation (rule 4: a completion matches its "
        "process's open invocation, and an op is completed at most once)",
        process_text(op.process), to_string(op.f));
  }
  if (open->second.f != op.f) {
    return fmt::format(
        "{} completes :{} but its open invocation (op {}) is :{} (rule 4: a completion matches "
        "its process's open invocation)",
        process_text(op.process), to_string(op.f), open->second.index, to_string(open->second.f));
  }
  return "";
}

void HistoryRules::admit(const Op& op) {
  ++next_index_;
  last_time_ns_ = op.time_ns;
  if (!is_client_op(op)) return;
  if (op.type == OpType::kInvoke) {
    open_[op.process] = Open{op.f, op.index, op.client, true};
    return;
  }
  const auto open = open_.find(op.process);
  LOCKSIM_ASSERT_MSG(open != open_.end() && open->second.open, "admit follows a passed check");
  open->second.open = false;
  if (op.type == OpType::kInfo) retired_.insert(op.process);
}

int64_t HistoryRecorder::record(Op op) {
  op.index = static_cast<int64_t>(history_.ops.size());
  const std::string broken = rules_.check(op);
  LOCKSIM_ASSERT_MSG(broken.empty(), broken.c_str());
  rules_.admit(op);
  history_.ops.push_back(std::move(op));
  return history_.ops.back().index;
}

void HistoryRecorder::begin_hold(int client, int64_t process, TimePoint start,
                                 int64_t acquire_index) {
  LOCKSIM_ASSERT(client >= 0);
  if (static_cast<size_t>(client) >= open_.size()) open_.resize(client + 1);
  LOCKSIM_ASSERT_MSG(!open_[client].has_value(), "a client holds at most one lease at a time");
  // The interval opens in the same step as its acquire :ok op (workload.h),
  // which is what lets a checker name the op that began a hold.
  LOCKSIM_ASSERT(acquire_index >= 0 && acquire_index < static_cast<int64_t>(history_.ops.size()));
  const Op& ok = history_.ops[static_cast<size_t>(acquire_index)];
  LOCKSIM_ASSERT_MSG(ok.f == OpF::kAcquire && ok.type == OpType::kOk && ok.client == client &&
                         ok.process == process && ok.time_ns == start.ns,
                     "a hold begins with its client's acquire :ok op, at that op's time");
  HeldInterval h;
  h.client = client;
  h.process = process;
  h.start = start;
  h.end = start;
  h.acquire_index = acquire_index;
  open_[client] = h;
}

void HistoryRecorder::end_hold(int client, TimePoint end, int64_t release_index,
                               HeldInterval::EndReason why) {
  if (!holding(client)) return;
  HeldInterval h = *open_[client];
  open_[client].reset();
  LOCKSIM_ASSERT_MSG(end >= h.start, "a held interval does not end before it starts");
  LOCKSIM_ASSERT(release_index >= -1 && release_index < static_cast<int64_t>(history_.ops.size()));
  h.end = end;
  h.release_index = release_index;
  h.end_reason = why;
  history_.held.push_back(h);
}

bool HistoryRecorder::holding(int client) const {
  return client >= 0 && static_cast<size_t>(client) < open_.size() && open_[client].has_value();
}

const HeldInterval* HistoryRecorder::open_hold(int client) const {
  return holding(client) ? &*open_[client] : nullptr;
}

History HistoryRecorder::finish(TimePoint end) {
  LOCKSIM_ASSERT_MSG(history_.ops.empty() || history_.ops.back().time_ns <= end.ns,
                     "the run ends after its last op");
  for (size_t c = 0; c < open_.size(); ++c) {
    end_hold(static_cast<int>(c), end, -1, HeldInterval::EndReason::kRunEnd);
  }
  history_.run_length = end - TimePoint{};
  return std::move(history_);
}

}  // namespace locksim::history
