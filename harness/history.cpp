#include "harness/history.h"

#include <cassert>

namespace locksim::harness {

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
  return f == OpF::kAcquire ? "acquire" : "release";
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
  return "c" + std::to_string(client + 1);
}

int64_t HistoryRecorder::record(Op op) {
  assert(history_.ops.empty() || history_.ops.back().time_ns <= op.time_ns);
  op.index = static_cast<int64_t>(history_.ops.size());
  history_.ops.push_back(std::move(op));
  return history_.ops.back().index;
}

void HistoryRecorder::begin_hold(int client, int64_t process, TimePoint start,
                                 int64_t acquire_index) {
  assert(client >= 0);
  if (static_cast<size_t>(client) >= open_.size()) open_.resize(client + 1);
  assert(!open_[client].has_value());  // a client holds at most one lease at a time
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
  for (size_t c = 0; c < open_.size(); ++c) {
    end_hold(static_cast<int>(c), end, -1, HeldInterval::EndReason::kRunEnd);
  }
  history_.run_length = end - TimePoint{};
  return std::move(history_);
}

}  // namespace locksim::harness
