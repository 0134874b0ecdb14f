// What a sweep keeps of one run (RunSummary), and the fault coverage test.
#include <algorithm>
#include <bit>
#include <cctype>
#include <set>

#include "env/assert.h"
#include "env/parse.h"
#include "harness/sweep/sweep.h"

namespace locksim::harness {

namespace {

using Json = nlohmann::json;

// The nodes a fault op names and the window in which it acts.
struct FaultReach {
  std::vector<std::string> targets;
  int64_t from_ns = 0;
  int64_t to_ns = 0;
};

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin <= list.size()) {
    const size_t comma = std::min(list.find(',', begin), list.size());
    if (comma > begin) out.push_back(list.substr(begin, comma - begin));
    begin = comma + 1;
  }
  return out;
}

// A fault's window: a pause, a hang, a crash with a restart, a partition
// with a heal and a loss with an end act for their duration; a delay spike
// for its duration and then its delay (a message sent at its end arrives
// that much later); a clock change, a crash without restart, a partition or
// a loss without an end act until the run ends. A link fault's targets are
// both its sides: {A, B, ...}, or a one-way partition's {"A->B", ...}.
FaultReach reach_of(const history::Op& op, int64_t run_end_ns) {
  FaultReach r;
  r.from_ns = op.time_ns;
  r.to_ns = run_end_ns;
  LOCKSIM_ASSERT(!op.value.empty());
  const bool link = op.f == history::OpF::kPartition || op.f == history::OpF::kDelay ||
                    op.f == history::OpF::kLoss;
  const size_t arrow = op.value[0].find("->");
  const bool one_way = link && arrow != std::string::npos;
  std::vector<std::string> sides = {op.value[0]};
  if (one_way) sides = {op.value[0].substr(0, arrow), op.value[0].substr(arrow + 2)};
  if (link && !one_way && op.value.size() > 1) sides.push_back(op.value[1]);
  for (const std::string& side : sides) {
    for (auto& n : split_names(side)) r.targets.push_back(std::move(n));
  }
  // The value items after the targets (and a loss's rate): the duration.
  const size_t named = (one_way ? 1 : link ? 2 : 1) + (op.f == history::OpF::kLoss ? 1 : 0);
  const bool timed = op.f == history::OpF::kPause || op.f == history::OpF::kCrash ||
                     op.f == history::OpF::kPartition || op.f == history::OpF::kHang ||
                     op.f == history::OpF::kLoss || op.f == history::OpF::kDelay;
  if (timed && op.value.size() > named) {
    r.to_ns = op.time_ns + parse_duration(op.value[named], "nemesis op value").ns;
    if (op.f == history::OpF::kDelay && op.value.size() > named + 1) {
      r.to_ns += parse_duration(op.value[named + 1], "nemesis op value").ns;
    }
  }
  LOCKSIM_ASSERT_MSG(r.to_ns >= r.from_ns, "a fault acts forward in time");
  return r;
}

// Whether a nemesis op starts a fault. A delay spike's end is recorded as a
// delay of its sides alone, and a loss's end as the rate it brings back: a
// rate of 0 ends every loss of the link.
bool starts_fault(const history::Op& op) {
  switch (op.f) {
    case history::OpF::kPause:
    case history::OpF::kCrash:
    case history::OpF::kPartition:
    case history::OpF::kDrift:
    case history::OpF::kJump:
    case history::OpF::kHang:
      return true;
    case history::OpF::kDelay:
      return op.value.size() >= 4;
    case history::OpF::kLoss:
      return op.value.size() >= 3 && std::stod(op.value[2]) > 0;
    default:
      return false;
  }
}

// Acquire latencies of the run (invoke to :ok, per process), into buckets.
std::map<int, int64_t> latency_histogram(const history::History& h) {
  std::map<int, int64_t> out;
  std::map<int64_t, int64_t> invoked;  // process -> acquire invoke time
  for (const history::Op& op : h.ops) {
    if (!history::is_client_op(op) || op.f != history::OpF::kAcquire) continue;
    if (op.type == history::OpType::kInvoke) {
      invoked[op.process] = op.time_ns;
    } else if (op.type == history::OpType::kOk) {
      const auto it = invoked.find(op.process);
      LOCKSIM_ASSERT_MSG(it != invoked.end(), "an acquire :ok follows its invocation");
      LOCKSIM_ASSERT(op.time_ns >= it->second);
      ++out[latency_bucket(op.time_ns - it->second)];
    }
  }
  return out;
}

}  // namespace

int latency_bucket(int64_t latency_ns) {
  const uint64_t us = static_cast<uint64_t>(std::max<int64_t>(1, latency_ns / 1000));
  const int msb = 63 - std::countl_zero(us);
  if (msb < 2) return static_cast<int>(us);  // 1..3 us: exact
  const int sub = static_cast<int>((us >> (msb - 2)) & 3);
  LOCKSIM_ASSERT(msb >= 2 && msb < 64 && sub >= 0 && sub < 4);
  return msb * 4 + sub;
}

int64_t latency_bucket_floor_ns(int bucket) {
  LOCKSIM_ASSERT(bucket >= 1 && bucket < 64 * 4);
  if (bucket < 8) return static_cast<int64_t>(bucket) * 1000;  // the exact ones
  const int msb = bucket / 4;
  const int sub = bucket % 4;
  LOCKSIM_ASSERT_MSG(msb >= 2, "buckets 4..7 are never made (latency_bucket)");
  return static_cast<int64_t>((4 + sub)) * (int64_t{1} << (msb - 2)) * 1000;
}

bool fault_touched_holder(const history::History& h, int64_t* faults_applied) {
  std::set<std::string> clients;
  for (const history::HeldInterval& held : h.held)
    clients.insert(history::client_label(held.client));
  int64_t applied = 0;
  bool touched = false;
  for (const history::Op& op : h.ops) {
    if (history::is_client_op(op) || !starts_fault(op)) continue;
    ++applied;
    const FaultReach r = reach_of(op, h.run_length.ns);
    for (const history::HeldInterval& held : h.held) {
      if (held.start.ns > r.to_ns || held.end.ns < r.from_ns) continue;
      for (const auto& t : r.targets) {
        // A server (any non-client node) is hit while someone holds; a client
        // only while it is the one holding.
        const bool is_client = t.size() > 1 && t[0] == 'c' && std::isdigit(t[1]);
        if (!is_client || t == history::client_label(held.client)) touched = true;
      }
    }
  }
  LOCKSIM_ASSERT_MSG(applied > 0 || !touched, "only an applied fault touches anyone");
  if (faults_applied != nullptr) *faults_applied = applied;
  return touched;
}

RunSummary summarize_run(const RunResult& result, uint64_t index, const std::string& profile) {
  RunSummary s;
  s.index = index;
  s.algorithm = result.algorithm;
  s.profile = profile;
  s.seed = result.seed;
  const bool unknown = overall_verdict(result) == checkers::Verdict::Kind::kUnknown;
  s.finding = unknown ? "unknown" : checkers::finding(result.checks);
  if (result.consequences.active) {
    s.data = result.consequences.kind == checkers::Verdict::Kind::kInvalid ? "violation" : "safe";
  }
  s.overlaps = static_cast<int64_t>(result.mutex.overlaps.size());
  s.never_told = static_cast<int64_t>(result.exposure.never_told.size());
  s.acquisitions = result.acquisitions;
  s.run_length_ns = result.history.run_length.ns;
  s.events = result.events;
  s.fault_touched = fault_touched_holder(result.history, &s.faults);
  s.latency = latency_histogram(result.history);
  s.replay = result.replay_command;
  if (!result.errors.empty()) s.error = result.errors.front();
  LOCKSIM_ASSERT_MSG(s.finding != "safety" || s.overlaps > 0, "a safety finding has its overlap");
  LOCKSIM_ASSERT(s.acquisitions >= 0 && s.run_length_ns >= 0);
  return s;
}

nlohmann::ordered_json summary_to_json(const RunSummary& s) {
  nlohmann::ordered_json j;
  j["index"] = s.index;
  j["algorithm"] = s.algorithm;
  j["profile"] = s.profile;
  j["seed"] = s.seed;
  j["finding"] = s.finding;
  if (!s.data.empty()) j["data"] = s.data;  // only runs that guarded a resource
  j["overlaps"] = s.overlaps;
  j["never_told"] = s.never_told;
  j["acquisitions"] = s.acquisitions;
  j["run_length_ns"] = s.run_length_ns;
  j["events"] = s.events;
  j["faults"] = s.faults;
  j["fault_touched"] = s.fault_touched;
  nlohmann::ordered_json lat = nlohmann::ordered_json::array();
  for (const auto& [bucket, count] : s.latency) lat.push_back({bucket, count});
  j["latency"] = std::move(lat);
  j["replay"] = s.replay;
  j["error"] = s.error;
  j["wall_ns"] = s.wall_ns;
  return j;
}

RunSummary summary_from_json(const Json& j, const std::string& field) {
  RunSummary s;
  try {
    s.index = j.at("index").get<uint64_t>();
    s.algorithm = j.at("algorithm").get<std::string>();
    s.profile = j.at("profile").get<std::string>();
    s.seed = j.at("seed").get<uint64_t>();
    s.finding = j.at("finding").get<std::string>();
    s.data = j.value("data", std::string());
    s.overlaps = j.at("overlaps").get<int64_t>();
    // Absent from the runs of sweeps written before the finding existed.
    s.never_told = j.value("never_told", int64_t{0});
    s.acquisitions = j.at("acquisitions").get<int64_t>();
    s.run_length_ns = j.at("run_length_ns").get<int64_t>();
    s.events = j.at("events").get<int64_t>();
    s.faults = j.at("faults").get<int64_t>();
    s.fault_touched = j.at("fault_touched").get<bool>();
    for (const auto& pair : j.at("latency")) {
      s.latency[pair.at(0).get<int>()] = pair.at(1).get<int64_t>();
    }
    s.replay = j.at("replay").get<std::string>();
    s.error = j.at("error").get<std::string>();
    s.wall_ns = j.at("wall_ns").get<int64_t>();
  } catch (const Json::exception& e) {
    throw ConfigError(field + ": not a run summary (" + e.what() + ")");
  }
  static const std::set<std::string> kFindings = {"safety", "liveness", "latent", "none",
                                                  "unknown"};
  if (kFindings.count(s.finding) == 0) {
    throw ConfigError(field +
                      ": finding: expected safety, liveness, latent, none or unknown, got '" +
                      s.finding + "'");
  }
  if (!s.data.empty() && s.data != "safe" && s.data != "violation") {
    throw ConfigError(field + ": data: expected safe or violation, got '" + s.data + "'");
  }
  return s;
}

}  // namespace locksim::harness
