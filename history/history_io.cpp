#include "history/history_io.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "env/assert.h"

namespace locksim::history {

namespace {

// Compact, UTF-8 kept as is, invalid bytes replaced instead of throwing: a
// reply detail from a misbehaving server must not make the history unwritable.
template <class Json>
std::string dump_line(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// The offending value, short enough to keep the error on one readable line.
template <class Json>
std::string shown(const Json& v) {
  std::string s = dump_line(v);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

[[noreturn]] void fail(const std::string& where, std::string_view field, std::string_view what) {
  throw std::runtime_error(fmt::format("{}: field '{}': {}", where, field, what));
}

template <class Json>
const Json* find_field(const Json& obj, const char* field, const std::string& where,
                       bool required) {
  auto it = obj.find(field);
  if (it == obj.end()) {
    if (required) fail(where, field, "missing");
    return nullptr;
  }
  return &*it;
}

template <class Json>
std::optional<int64_t> get_int(const Json& obj, const char* field, const std::string& where,
                               bool required, int64_t lo = std::numeric_limits<int64_t>::min(),
                               int64_t hi = std::numeric_limits<int64_t>::max()) {
  const Json* v = find_field(obj, field, where, required);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number_integer()) fail(where, field, "expected an integer, got " + shown(*v));
  if (v->is_number_unsigned() &&
      v->template get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    fail(where, field, "out of range, got " + shown(*v));
  }
  const int64_t x = v->template get<int64_t>();
  if (x < lo || x > hi) {
    fail(where, field, fmt::format("expected an integer in [{}, {}], got {}", lo, hi, x));
  }
  return x;
}

template <class Json>
std::optional<uint64_t> get_uint(const Json& obj, const char* field, const std::string& where) {
  const Json* v = find_field(obj, field, where, false);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number_unsigned()) {
    fail(where, field, "expected a non-negative integer, got " + shown(*v));
  }
  return v->template get<uint64_t>();
}

template <class Json>
std::string get_string(const Json& obj, const char* field, const std::string& where,
                       bool required) {
  const Json* v = find_field(obj, field, where, required);
  if (v == nullptr) return "";
  if (!v->is_string()) fail(where, field, "expected a string, got " + shown(*v));
  return v->template get<std::string>();
}

// A required "client" field: its label as every text shows it ("c1" is the
// first client), read back to the 0-based index (client_from_label).
template <class Json>
int get_client(const Json& obj, const std::string& where) {
  const Json* v = find_field(obj, "client", where, true);
  const std::optional<int> client =
      v->is_string() ? client_from_label(v->template get<std::string>()) : std::nullopt;
  if (!client) {
    fail(where, "client",
         "expected a client label such as \"c1\" (clients count from c1), got " + shown(*v));
  }
  return *client;
}

// Maps a string field onto one of `names` (given in enum order) and returns
// its position.
template <class Json, size_t N>
int get_enum(const Json& obj, const char* field, const std::string& where,
             const char* const (&names)[N]) {
  const Json* v = find_field(obj, field, where, true);
  std::string choices;
  for (const char* n : names) choices += (choices.empty() ? "" : "|") + std::string(n);
  if (v->is_string()) {
    const std::string s = v->template get<std::string>();
    for (size_t i = 0; i < N; ++i) {
      LOCKSIM_ASSERT(names[i] != nullptr);
      if (s == names[i]) return static_cast<int>(i);
    }
  }
  fail(where, field, fmt::format("expected one of {}, got {}", choices, shown(*v)));
}

constexpr const char* kTypeNames[] = {"invoke", "ok", "fail", "info"};  // OpType order
constexpr const char* kClientFNames[] = {"acquire", "release"};         // OpF order, from 0
constexpr const char* kNemesisFNames[] = {"pause", "resume", "crash", "restart", "partition",
                                          "heal",  "drift",  "jump",  "delay",   "loss",
                                          "hang",  "unhang", "skip"};  // from kPause
constexpr const char* kEndNames[] = {"release", "crash", "run-end"};   // EndReason order
constexpr const char* kNemesisName = "nemesis";                        // "process" of nemesis ops

// EDN string literal: quotes and backslashes escaped, control characters as
// escapes EDN reads (\n \t \r, others \uXXXX).
std::string edn_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// A client process is an integer >= 0; the nemesis's is the string "nemesis".
template <class Json>
int64_t get_process(const Json& obj, const std::string& where) {
  const Json* v = find_field(obj, "process", where, true);
  if (v->is_string() && v->template get<std::string>() == kNemesisName) return kNemesisProcess;
  // nlohmann reads every integer >= 0 as unsigned, every negative one as signed.
  if (!v->is_number_unsigned()) {
    fail(where, "process", "expected an integer >= 0 or \"nemesis\", got " + shown(*v));
  }
  return *get_int(obj, "process", where, true);  // rejects what int64_t cannot hold
}

template <class Json>
std::vector<std::string> get_string_array(const Json& obj, const char* field,
                                          const std::string& where) {
  const Json* v = find_field(obj, field, where, true);
  bool ok = v->is_array();
  for (size_t i = 0; ok && i < v->size(); ++i) ok = (*v)[i].is_string();
  if (!ok) fail(where, field, "expected an array of strings, got " + shown(*v));
  return v->template get<std::vector<std::string>>();
}

// Fields one kind of op never has: present, they are a mistake, not noise.
template <class Json>
void reject_fields(const Json& obj, std::initializer_list<const char*> fields,
                   const std::string& where, std::string_view why) {
  for (const char* field : fields) {
    if (obj.contains(field)) fail(where, field, why);
  }
}

// The fields after "process" of one op; the index, time and process are read.
template <class Json>
void read_op_body(const Json& j, const std::string& where, Op& op) {
  op.type = static_cast<OpType>(get_enum(j, "type", where, kTypeNames));
  if (!is_client_op(op)) {
    op.f =
        static_cast<OpF>(static_cast<int>(OpF::kPause) + get_enum(j, "f", where, kNemesisFNames));
    reject_fields(j, {"client", "token", "fence"}, where, "nemesis ops have none");
    op.value = get_string_array(j, "value", where);
    op.detail = get_string(j, "detail", where, false);
    return;
  }
  op.f = static_cast<OpF>(get_enum(j, "f", where, kClientFNames));
  reject_fields(j, {"value"}, where, "client ops have none (acquire and release take no value)");
  op.client = get_client(j, where);
  op.token = get_string(j, "token", where, false);
  op.fence = get_uint(j, "fence", where);
  op.detail = get_string(j, "detail", where, false);
}

// A client holds at most one lease at a time, so its own intervals never
// overlap (the recorder asserts it; a file may break it). O(n log n).
void check_one_hold_per_client(const std::vector<HeldInterval>& held) {
  std::vector<size_t> order(held.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    // End before start breaks ties, so an empty interval never "overlaps"
    // one that begins at the same instant.
    return std::make_tuple(held[x].client, held[x].start.ns, held[x].end.ns, x) <
           std::make_tuple(held[y].client, held[y].start.ns, held[y].end.ns, y);
  });
  for (size_t k = 1; k < order.size(); ++k) {
    const size_t i = std::min(order[k - 1], order[k]);
    const size_t j = std::max(order[k - 1], order[k]);
    if (held[i].client == held[j].client && held[order[k]].start < held[order[k - 1]].end) {
      throw std::runtime_error(fmt::format(
          "held[{}]: overlaps held[{}], an interval of the same client {} ([{}, {}) and [{}, {}) "
          "ns); a client holds at most one lease at a time",
          j, i, client_label(held[j].client), held[i].start.ns, held[i].end.ns, held[j].start.ns,
          held[j].end.ns));
    }
  }
}

template <class Json>
std::vector<HeldInterval> held_from_json_impl(const Json& held) {
  if (!held.is_array()) {
    throw std::runtime_error("held: expected a JSON array, got " + shown(held));
  }
  std::vector<HeldInterval> out;
  out.reserve(held.size());
  for (size_t i = 0; i < held.size(); ++i) {
    const Json& e = held[i];
    const std::string where = fmt::format("held[{}]", i);
    if (!e.is_object()) throw std::runtime_error(where + ": expected a JSON object");
    HeldInterval h;
    h.client = get_client(e, where);
    h.process = *get_int(e, "process", where, true);
    h.start = TimePoint::from_ns(*get_int(e, "start_ns", where, true));
    h.end = TimePoint::from_ns(*get_int(e, "end_ns", where, true));
    h.acquire_index = *get_int(e, "acquire_index", where, true, -1);
    h.release_index = *get_int(e, "release_index", where, true, -1);
    h.end_reason =
        static_cast<HeldInterval::EndReason>(get_enum(e, "end_reason", where, kEndNames));
    if (h.end < h.start) {
      fail(where, "end_ns",
           fmt::format("ends before it starts ({} < start_ns {}); a held interval never does",
                       h.end.ns, h.start.ns));
    }
    out.push_back(h);
    LOCKSIM_ASSERT(out.back().start <= out.back().end);
  }
  check_one_hold_per_client(out);
  return out;
}

}  // namespace

namespace {

// The writers' half of the pair with parse_jsonl's checks: what locksim writes
// has dense indices in true-time order, or a reader (Knossos too) rejects it.
void assert_writable(const History& history, size_t i) {
  const Op& op = history.ops[i];
  LOCKSIM_ASSERT(op.index == static_cast<int64_t>(i));
  LOCKSIM_ASSERT(i == 0 || history.ops[i - 1].time_ns <= op.time_ns);
}

}  // namespace

std::string to_edn(const History& history) {
  std::string out;
  for (size_t i = 0; i < history.ops.size(); ++i) {
    const Op& op = history.ops[i];
    assert_writable(history, i);
    if (is_client_op(op)) {
      out += fmt::format("{{:index {}, :time {}, :process {}, :type :{}, :f :{}, :value nil}}\n",
                         op.index, op.time_ns, op.process, to_string(op.type), to_string(op.f));
      continue;
    }
    std::string value;
    for (const std::string& v : op.value) value += (value.empty() ? "" : " ") + edn_string(v);
    out +=
        fmt::format("{{:index {}, :time {}, :process :{}, :type :{}, :f :{}, :value [{}]}}\n",
                    op.index, op.time_ns, kNemesisName, to_string(op.type), to_string(op.f), value);
  }
  return out;
}

std::string to_jsonl(const History& history) {
  std::string out;
  for (size_t i = 0; i < history.ops.size(); ++i) {
    const Op& op = history.ops[i];
    assert_writable(history, i);
    nlohmann::ordered_json j;
    j["index"] = op.index;
    j["time_ns"] = op.time_ns;
    if (is_client_op(op)) {
      j["process"] = op.process;
    } else {
      j["process"] = kNemesisName;
    }
    j["type"] = to_string(op.type);
    j["f"] = to_string(op.f);
    if (is_client_op(op)) {
      j["client"] = client_label(op.client);
      j["token"] = op.token;
      if (op.fence) j["fence"] = *op.fence;
    } else {
      j["value"] = op.value;
    }
    if (!op.detail.empty()) j["detail"] = op.detail;
    out += dump_line(j);
    out += '\n';
  }
  return out;
}

namespace {

// The keys of `line`'s top-level object, counted in one pass over its bytes
// (strings skipped, escapes honoured): a parse with a callback that kept
// every key would cost a history of a million ops a second set per line.
size_t top_level_keys(std::string_view line) {
  size_t keys = 0;
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_string) {
      if (c == '\\') ++i;
      if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    if (c == ':' && depth == 1) ++keys;
  }
  return keys;
}

// The first key of `line`'s top-level object given before (only asked for
// once top_level_keys found one).
std::string first_repeated_key(std::string_view line) {
  std::vector<std::string> seen;
  std::string repeated;
  const auto note_key = [&](int d, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    if (event != nlohmann::json::parse_event_t::key || d != 1 || !repeated.empty()) return true;
    const std::string key = parsed.get<std::string>();
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) repeated = key;
    seen.push_back(key);
    return true;
  };
  const nlohmann::json parsed = nlohmann::json::parse(line, note_key);
  LOCKSIM_ASSERT(parsed.is_object());
  LOCKSIM_ASSERT_MSG(!repeated.empty(), "called only for a line with a key given twice");
  return repeated;
}

}  // namespace

History parse_jsonl(std::string_view text, const std::string& source) {
  History history;
  HistoryRules rules;
  size_t line_no = 0;
  int64_t last_time = std::numeric_limits<int64_t>::min();
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // files edited on Windows
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;

    const std::string where = fmt::format("{} line {}", source, line_no);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      // what() is "[json.exception.parse_error.101] parse error at ...": keep the useful part.
      std::string what = e.what();
      if (const size_t p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
      throw std::runtime_error(fmt::format("{}: invalid JSON: {}", where, what));
    }
    if (!j.is_object()) throw std::runtime_error(where + ": expected a JSON object per line");
    // nlohmann keeps the last of a key given twice, silently; a line that
    // says "index" twice is no op locksim wrote.
    if (top_level_keys(line) != j.size()) {
      throw std::runtime_error(
          fmt::format("{}: {}: given twice; give each key once", where, first_repeated_key(line)));
    }

    Op op;
    const auto expected_index = static_cast<int64_t>(history.ops.size());
    op.index = *get_int(j, "index", where, true);
    if (op.index != expected_index) {
      fail(where, "index",
           fmt::format("expected {} (indices are dense and in order), got {}", expected_index,
                       op.index));
    }
    op.time_ns = *get_int(j, "time_ns", where, true);
    if (op.time_ns < last_time) {
      fail(where, "time_ns",
           fmt::format("goes back in time ({} after {}); ops must be in true-time order",
                       op.time_ns, last_time));
    }
    last_time = op.time_ns;
    op.process = get_process(j, where);
    read_op_body(j, where, op);
    // Each field is fine; the op must also fit the ones before it (the rules
    // the recorder asserts), since every checker relies on them.
    if (const std::string broken = rules.check(op); !broken.empty()) {
      throw std::runtime_error(fmt::format("{}: op {}: {}", where, op.index, broken));
    }
    rules.admit(op);
    history.ops.push_back(std::move(op));
    LOCKSIM_ASSERT(history.ops.back().index + 1 == static_cast<int64_t>(history.ops.size()));
  }
  return history;
}

nlohmann::ordered_json held_to_json(const History& history) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const HeldInterval& h : history.held) {
    // Pair with held_from_json: what is written reads back.
    LOCKSIM_ASSERT(h.start <= h.end);
    LOCKSIM_ASSERT(h.client >= 0);
    nlohmann::ordered_json j;
    j["client"] = client_label(h.client);
    j["process"] = h.process;
    j["start_ns"] = h.start.ns;
    j["end_ns"] = h.end.ns;
    j["acquire_index"] = h.acquire_index;
    j["release_index"] = h.release_index;
    j["end_reason"] = to_string(h.end_reason);
    out.push_back(std::move(j));
  }
  return out;
}

std::vector<HeldInterval> held_from_json(const nlohmann::ordered_json& held) {
  return held_from_json_impl(held);
}

std::vector<HeldInterval> held_from_json(const nlohmann::json& held) {
  return held_from_json_impl(held);
}

}  // namespace locksim::history
