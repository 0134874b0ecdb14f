#include "history/edn_history.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "env/assert.h"
#include "env/parse.h"
#include "history/edn_value.h"
#include "history/history_file.h"

namespace locksim::history {

namespace {

using edn::kind_name;
using edn::Reader;
using edn::shown;
using edn::Value;

// Turns op maps into Ops, keeping the counts and the :index rules.
class OpCollector {
 public:
  OpCollector(Reader& reader, EdnHistory& out) : reader_(reader), out_(out) {}

  void add(const Value& form) {
    const Value* map = &form;
    // Jepsen's own history files write ops as records: #jepsen.history.Op{...}.
    if (form.kind == Value::Kind::kTagged && form.items.front().kind == Value::Kind::kMap) {
      map = &form.items.front();
    }
    if (map->kind != Value::Kind::kMap) {
      fail(form, fmt::format("expected an op map such as {{:process 0, :type :invoke, :f "
                             ":acquire}}, got {}",
                             kind_name(form.kind)));
    }
    const Fields f = fields(*map);
    const int64_t position = out_.total_ops++;
    const int64_t index = op_index(*map, f.index, position);
    if (!f.process) fail(*map, "op map: missing :process");
    if (f.process->kind != Value::Kind::kInt) {
      if (f.process->kind == Value::Kind::kBigInt) fail(*f.process, ":process: out of range");
      ++out_.skipped_ops;  // not a client (Jepsen: client ops have integer processes)
      return;
    }
    if (f.process->integer < 0) {
      fail(*f.process, fmt::format(":process: expected an integer >= 0 (a client) or a keyword "
                                   "such as :nemesis, got {}",
                                   shown(*f.process)));
    }
    Op op;
    op.index = index;
    op.process = f.process->integer;
    op.client = -1;
    op.type = static_cast<OpType>(one_of(*map, f.type, ":type", kTypes));
    op.f = static_cast<OpF>(one_of(*map, f.f, ":f", kFs));
    if (f.time) {
      if (f.time->kind != Value::Kind::kInt) {
        fail(*f.time, ":time: expected an integer (nanoseconds), got " + shown(*f.time));
      }
      op.time_ns = f.time->integer;
    }
    out_.ops.push_back(op);
    out_.lines.push_back(map->line);
    // Pair: every client op kept has its source line, for messages naming where.
    LOCKSIM_ASSERT(out_.ops.size() == out_.lines.size());
  }

  // Every :index used once.
  void finish() {
    std::sort(indices_.begin(), indices_.end());
    for (size_t i = 1; i < indices_.size(); ++i) {
      if (indices_[i].first == indices_[i - 1].first) {
        const auto [line, column] = indices_[i].second;
        reader_.fail_at(line, column,
                        fmt::format(":index: {} is used twice (also by the op at line {}); "
                                    "indices must be unique",
                                    indices_[i].first, indices_[i - 1].second.first));
      }
    }
  }

 private:
  struct Fields {
    const Value* process = nullptr;
    const Value* type = nullptr;
    const Value* f = nullptr;
    const Value* index = nullptr;
    const Value* time = nullptr;
  };
  static constexpr const char* kTypes[] = {"invoke", "ok", "fail", "info"};  // OpType order
  static constexpr const char* kFs[] = {"acquire", "release"};               // OpF order

  [[noreturn]] void fail(const Value& at, const std::string& what) const {
    reader_.fail_at(at.line, at.column, what);
  }

  Fields fields(const Value& map) const {
    Fields f;
    for (size_t i = 0; i + 1 < map.items.size(); i += 2) {
      const Value& key = map.items[i];
      if (key.kind != Value::Kind::kKeyword) continue;  // not one of ours: ignored
      const Value** slot = key.text == "process" ? &f.process
                           : key.text == "type"  ? &f.type
                           : key.text == "f"     ? &f.f
                           : key.text == "index" ? &f.index
                           : key.text == "time"  ? &f.time
                                                 : nullptr;
      if (slot == nullptr) continue;
      if (*slot != nullptr) fail(key, fmt::format("duplicate key :{} in an op map", key.text));
      *slot = &map.items[i + 1];
    }
    return f;
  }

  int64_t op_index(const Value& map, const Value* index, int64_t position) {
    const bool has = index != nullptr;
    if (position == 0) indexed_ = has;
    if (has != indexed_) {
      fail(map, has ? "op map: has an :index but the first op has none; give every op an :index "
                      "or none"
                    : "op map: missing :index (the first op has one; give every op an :index or "
                      "none)");
    }
    if (!has) return position;
    if (index->kind != Value::Kind::kInt) {
      fail(*index, ":index: expected an integer, got " + shown(*index));
    }
    indices_.push_back({index->integer, {index->line, index->column}});
    return index->integer;
  }

  template <size_t N>
  int one_of(const Value& map, const Value* v, const char* field, const char* const (&names)[N]) {
    std::string choices;
    for (const char* n : names) choices += fmt::format("{}:{}", choices.empty() ? "" : " ", n);
    if (v == nullptr) fail(map, fmt::format("op map: missing {} (one of {})", field, choices));
    if (v->kind == Value::Kind::kKeyword) {
      for (size_t i = 0; i < N; ++i) {
        if (v->text == names[i]) return static_cast<int>(i);
      }
    }
    fail(*v, fmt::format("{}: expected one of {}, got {}", field, choices, shown(*v)));
  }

  Reader& reader_;
  EdnHistory& out_;
  bool indexed_ = false;
  std::vector<std::pair<int64_t, std::pair<int, int>>> indices_;  // (index, (line, column))
};

}  // namespace

EdnHistory parse_edn_history(std::string_view text, const std::string& source) {
  EdnHistory out;
  Reader r(text, source);
  OpCollector ops(r, out);
  r.skip_space();
  if (!r.at_end() && (r.current() == '[' || r.current() == '(')) {
    // One vector (or list) of op maps: read it element by element, so a
    // million-op history never sits in memory as one EDN tree.
    const char close = r.current() == '[' ? ']' : ')';
    const int line = r.line();
    const int column = r.column();
    r.advance();
    for (;;) {
      r.skip_space();
      if (r.at_end()) {
        r.fail(
            fmt::format("expected '{}' to close the collection of ops opened at {}:{}, got "
                        "end of input",
                        close, line, column));
      }
      if (r.current() == close) break;
      ops.add(r.read(1));
    }
    r.advance();
    r.skip_space();
    if (!r.at_end()) {
      r.fail(
          "expected end of input after the collection of ops (a history is op maps, or one "
          "vector of them)");
    }
  } else {
    while (!r.at_end()) {
      ops.add(r.read(0));
      r.skip_space();
    }
  }
  ops.finish();
  LOCKSIM_ASSERT(out.ops.size() == out.lines.size());
  LOCKSIM_ASSERT(out.total_ops == static_cast<int64_t>(out.ops.size()) + out.skipped_ops);
  return out;
}

EdnHistory load_edn_history(const std::string& path) {
  return parse_edn_history(read_history_text(path), path);
}

}  // namespace locksim::history
