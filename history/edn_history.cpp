#include "history/edn_history.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "env/assert.h"
#include "env/parse.h"
#include "history/edn_part.h"
#include "history/edn_value.h"
#include "history/history_file.h"

namespace locksim::history {

namespace {

using edn::kind_name;
using edn::Reader;
using edn::shown;
using edn::Value;

// One of the five values an op uses. An integer or a keyword, every op's
// case, is kept as an Atom (no Value, nothing allocated: building a Value per
// form was most of the old reader's time); anything else as the Value read()
// made, for the error that will name it (behind a pointer: a Field is moved
// five times an op, and an inline Value made each move copy a hundred bytes).
// `atom` has the kind, the integer and the position either way.
struct Field {
  edn::Atom atom;
  std::unique_ptr<Value> whole;

  Value value() const { return whole ? *whole : atom.value(); }  // for messages
};

// The fields of one op map, kept while the map is read; its other keys'
// values are read (so the map is checked as EDN) and dropped. The atoms point
// into the text, which the parse keeps until the op is taken (TextDone).
struct OpMap {
  int line = 0;  // where the map starts, 1-based
  int column = 0;
  std::optional<Field> process;
  std::optional<Field> type;
  std::optional<Field> f;
  std::optional<Field> index;
  std::optional<Field> time;
  std::optional<edn::Atom> duplicate;  // the first key seen twice, if any
};

// The slot of keyword `name` in `map`, or nullptr for a key an op does not use.
std::optional<Field>* slot_of(OpMap& map, std::string_view name) {
  return name == "process" ? &map.process
         : name == "type"  ? &map.type
         : name == "f"     ? &map.f
         : name == "index" ? &map.index
         : name == "time"  ? &map.time
                           : nullptr;
}

// The next form, at nesting `depth`, as a Field.
Field read_field(Reader& r, int depth) {
  if (std::optional<edn::Atom> a = r.read_atom_fast()) return Field{*a, nullptr};
  Field f;
  f.whole = std::make_unique<Value>(r.read(depth));
  f.atom.kind = f.whole->kind;
  f.atom.integer = f.whole->integer;
  f.atom.line = f.whole->line;
  f.atom.column = f.whole->column;
  // Pair with Field's contract: only atoms carry a keyword's name (read()
  // gives a keyword only where read_atom_fast would have).
  LOCKSIM_ASSERT(f.atom.kind != Value::Kind::kKeyword);
  return f;
}

// The key of an op map: the slot its value goes to, or nullptr when the key
// is not one of the five (not a keyword, or another keyword: ignored).
std::optional<Field>* read_key(Reader& r, OpMap& m, int depth) {
  const std::optional<edn::Atom> key = r.read_atom_fast();
  if (!key) {
    (void)r.read(depth);  // never a keyword: read_atom_fast reads every valid one
    return nullptr;
  }
  if (key->kind != Value::Kind::kKeyword) return nullptr;
  std::optional<Field>* slot = slot_of(m, key->text);
  if (slot != nullptr && slot->has_value()) {
    // Named once the map is read: a syntax error later in it comes first.
    if (!m.duplicate) m.duplicate = key;
    return nullptr;
  }
  return slot;
}

// The map whose '{' is current(), when it is flat (Reader::read_flat_map):
// the fields read_op_map would take from it, the same atoms, and the same
// first duplicate key; false having read nothing otherwise.
bool read_flat_op_map(Reader& r, OpMap& m) {
  thread_local Reader::FlatPairs pairs;  // reused: see FlatPairs
  if (!r.read_flat_map(pairs)) return false;
  for (int i = 0; i < pairs.count; ++i) {
    std::optional<Field>* slot = slot_of(m, pairs.keys[i].text);
    if (slot == nullptr) continue;  // a key an op does not use
    if (slot->has_value()) {
      if (!m.duplicate) m.duplicate = pairs.keys[i];  // as read_key names it
      continue;
    }
    slot->emplace(Field{pairs.values[i], nullptr});
  }
  return true;
}

// Reads the map whose '{' is current() at nesting `depth`, as Reader::read
// would (the same errors, at the same places) but without building it.
OpMap read_op_map(Reader& r, int depth) {
  LOCKSIM_ASSERT(r.current() == '{');
  if (depth > edn::kDepthMax) {
    r.fail(fmt::format("collections nested deeper than {} levels", edn::kDepthMax));
  }
  OpMap m;
  m.line = r.line();
  m.column = r.column();
  if (read_flat_op_map(r, m)) return m;
  r.advance();
  size_t forms = 0;
  std::optional<Field>* slot = nullptr;  // where the value after the last key goes
  while (r.next_item(Value::Kind::kMap, '}', m.line, m.column)) {
    if (forms++ % 2 == 0) {
      slot = read_key(r, m, depth + 1);
    } else if (slot != nullptr) {
      *slot = read_field(r, depth + 1);
    } else if (!r.read_atom_fast()) {
      (void)r.read(depth + 1);  // a value of a key an op does not use: read, then dropped
    }
  }
  if (forms % 2 != 0) {
    r.fail_at(m.line, m.column, "a map with a key but no value (odd number of forms)");
  }
  return m;
}

// Thrown by an OpCollector that keeps no indices at the first :index not
// above the one before: the read starts again, keeping them (see below).
struct IndicesOutOfOrder {};

// Turns op maps into Ops, keeping the counts and the :index rules.
//
// Unique indices need a list of them (index, line, column: 24 MB for 1 M
// ops) only when they do not strictly increase: then finish() sorts them
// and names a duplicate. Files list ops in index order, so an OpCollector
// asked to keep no indices checks only that they increase, and throws
// IndicesOutOfOrder at the first that does not; the caller reads the text
// again keeping them. Any error before that point is the same either way,
// and a duplicate is named only by finish(), after every other error.
class OpCollector {
 public:
  // Client ops go to out.ops and out.lines, or to `*compact` when it is set.
  OpCollector(Reader& reader, EdnHistory& out, bool keep_indices,
              std::vector<PartOp>* compact = nullptr)
      : reader_(reader), out_(out), compact_(compact), keep_indices_(keep_indices) {}

  // Reads one top-level form at nesting `depth` and takes it as an op.
  // Precondition: skip_space() found a form.
  void read(int depth) {
    if (reader_.current() == '{') return add(read_op_map(reader_, depth));
    // Jepsen's own history files write ops as records: #jepsen.history.Op{...}.
    const char next = reader_.peek(1);
    if (reader_.current() == '#' && next != '{' && next != '#') {
      Value tag = reader_.read_tag();
      if (reader_.current() == '{') return add(read_op_map(reader_, depth + 1));
      tag.items.push_back(reader_.read(depth + 1));  // read whole before the error, as ever
      not_a_map(tag);
    }
    not_a_map(reader_.read(depth));
  }

  // Every :index used once.
  void finish() {
    if (!keep_indices_) return;  // they increased strictly: no duplicate
    // Files list ops in index order: then the O(n log n) sort is skipped.
    if (!std::is_sorted(indices_.begin(), indices_.end())) {
      std::sort(indices_.begin(), indices_.end());
    }
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

  // Whether the ops carry :index, and their range: what joining two parts
  // needs. Precondition: finish() passed (the indices are sorted).
  void describe(EdnPart& part) const {
    part.indexed = indexed_;
    if (!keep_indices_) {
      part.index_min = first_index_;
      part.index_max = last_index_;
    } else if (!indices_.empty()) {
      part.index_min = indices_.front().first;
      part.index_max = indices_.back().first;
    }
  }

 private:
  static constexpr const char* kTypes[] = {"invoke", "ok", "fail", "info"};  // OpType order
  static constexpr const char* kFs[] = {"acquire", "release"};               // OpF order

  [[noreturn]] void fail(const Value& at, const std::string& what) const {
    reader_.fail_at(at.line, at.column, what);
  }
  [[noreturn]] void fail(const Field& at, const std::string& what) const {
    reader_.fail_at(at.atom.line, at.atom.column, what);
  }
  [[noreturn]] void fail(const edn::Atom& at, const std::string& what) const {
    reader_.fail_at(at.line, at.column, what);
  }
  [[noreturn]] void fail(const OpMap& at, const std::string& what) const {
    reader_.fail_at(at.line, at.column, what);
  }

  [[noreturn]] void not_a_map(const Value& form) const {
    fail(form, fmt::format("expected an op map such as {{:process 0, :type :invoke, :f "
                           ":acquire}}, got {}",
                           kind_name(form.kind)));
  }

  void add(const OpMap& map) {
    if (map.duplicate) {
      fail(*map.duplicate, fmt::format("duplicate key :{} in an op map", map.duplicate->text));
    }
    const int64_t position = out_.total_ops++;
    const int64_t index = op_index(map, position);
    if (!map.process) fail(map, "op map: missing :process");
    const edn::Atom& process = map.process->atom;
    if (process.kind == Value::Kind::kKeyword) {
      ++out_.skipped_ops;  // not a client (Jepsen: client ops have integer processes)
      return;
    }
    if (process.kind == Value::Kind::kBigInt) {
      fail(process, fmt::format(":process: expected an integer from 0 to {} (a client), got {}",
                                INT64_MAX, shown(map.process->value())));
    }
    // Anything else ("1", 1.5, nil) is a malformed client op, never skipped:
    // skipping it could turn an invalid history valid.
    if (process.kind != Value::Kind::kInt || process.integer < 0) {
      fail(process, fmt::format(":process: expected an integer >= 0 (a client) or a keyword "
                                "such as :nemesis, got {}",
                                shown(map.process->value())));
    }
    const int type = one_of(map, map.type, ":type", kTypes);
    const int f = one_of(map, map.f, ":f", kFs);
    int64_t time_ns = 0;
    if (map.time) {
      if (map.time->atom.kind != Value::Kind::kInt || map.time->atom.integer < 0) {
        fail(*map.time, ":time: expected an integer >= 0 (nanoseconds since the test began), got " +
                            shown(map.time->value()));
      }
      time_ns = map.time->atom.integer;
    }
    if (compact_ != nullptr) {
      compact_->push_back(PartOp{index, time_ns, process.integer, map.line,
                                 static_cast<uint8_t>(type), static_cast<uint8_t>(f)});
      return;
    }
    Op& op = out_.ops.emplace_back();
    op.index = index;
    op.process = process.integer;
    op.client = -1;
    op.type = static_cast<OpType>(type);
    op.f = static_cast<OpF>(f);
    op.time_ns = time_ns;
    out_.lines.push_back(map.line);
    // Pair: every client op kept has its source line, for messages naming where.
    LOCKSIM_ASSERT(out_.ops.size() == out_.lines.size());
  }

  int64_t op_index(const OpMap& map, int64_t position) {
    const bool has = map.index.has_value();
    if (position == 0) indexed_ = has;
    if (has != indexed_) {
      fail(map, has ? "op map: has an :index but the first op has none; give every op an :index "
                      "or none"
                    : "op map: missing :index (the first op has one; give every op an :index or "
                      "none)");
    }
    if (!has) return position;
    const edn::Atom& index = map.index->atom;
    if (index.kind != Value::Kind::kInt || index.integer < 0) {
      fail(index, ":index: expected an integer >= 0, got " + shown(map.index->value()));
    }
    if (keep_indices_) {
      indices_.push_back({index.integer, {index.line, index.column}});
    } else {
      if (position > 0 && index.integer <= last_index_) throw IndicesOutOfOrder{};
      if (position == 0) first_index_ = index.integer;
      last_index_ = index.integer;
    }
    return index.integer;
  }

  template <size_t N>
  int one_of(const OpMap& map, const std::optional<Field>& v, const char* field,
             const char* const (&names)[N]) const {
    if (v && v->atom.kind == Value::Kind::kKeyword) {
      for (size_t i = 0; i < N; ++i) {
        if (v->atom.text == names[i]) return static_cast<int>(i);
      }
    }
    // Only an error pays for the list of choices.
    std::string choices;
    for (const char* n : names) choices += fmt::format("{}:{}", choices.empty() ? "" : " ", n);
    if (!v) fail(map, fmt::format("op map: missing {} (one of {})", field, choices));
    fail(*v, fmt::format("{}: expected one of {}, got {}", field, choices, shown(v->value())));
  }

  Reader& reader_;
  EdnHistory& out_;
  std::vector<PartOp>* compact_;
  const bool keep_indices_;
  bool indexed_ = false;
  int64_t first_index_ = 0;  // without keep_indices_: the first and the last :index
  int64_t last_index_ = 0;
  std::vector<std::pair<int64_t, std::pair<int, int>>> indices_;  // (index, (line, column))
};

// Calls `done` at an op's end every kTextDoneStep bytes (see TextDone).
class DoneSteps {
 public:
  DoneSteps(const Reader& r, const TextDone& done) : r_(r), done_(done) {}
  void op_read() {
    if (done_ && r_.offset() - done_at_ >= kTextDoneStep) {
      done_at_ = r_.offset();
      done_(done_at_);
    }
  }

 private:
  const Reader& r_;
  const TextDone& done_;
  size_t done_at_ = 0;  // the offset last handed to `done`
};

// Reads top-level forms to the end of the text, each an op.
void read_bare_ops(Reader& r, OpCollector& ops, DoneSteps& steps) {
  r.skip_space();
  while (!r.at_end()) {
    ops.read(0);
    steps.op_read();
    r.skip_space();
  }
}

// One vector (or list) of op maps, its bracket current(): read element by
// element, so a million-op history never sits in memory as one EDN tree.
void read_vector_of_ops(Reader& r, OpCollector& ops, DoneSteps& steps) {
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
    ops.read(1);
    steps.op_read();
  }
  r.advance();
  r.skip_space();
  if (!r.at_end()) {
    r.fail(
        "expected end of input after the collection of ops (a history is op maps, or one "
        "vector of them)");
  }
}

// Room for every op of a text of `bytes` without a copy while the vector
// grows (a copy would hold a 1 M-op history twice): ops in locksim's and
// Jepsen's files take 55 to 80 bytes, so this is more than enough, and
// capacity never written to is never given memory by the kernel. Capped so
// a huge file cannot ask for more address space than a machine has; past
// the cap it grows.
size_t ops_reserved_for(size_t bytes) {
  return std::min<size_t>(bytes / kOpBytesMin + 1, kOpsReservedMax);
}

// parse_edn_history, keeping every :index or only checking that they
// increase (see OpCollector).
EdnHistory parse_edn_history(std::string_view text, const std::string& source, const TextDone& done,
                             bool keep_indices) {
  EdnHistory out;
  const size_t ops_max = ops_reserved_for(text.size());
  out.ops.reserve(ops_max);
  out.lines.reserve(ops_max);
  Reader r(text, source);
  OpCollector ops(r, out, keep_indices);
  DoneSteps steps(r, done);
  r.skip_space();
  if (!r.at_end() && (r.current() == '[' || r.current() == '(')) {
    read_vector_of_ops(r, ops, steps);
  } else {
    read_bare_ops(r, ops, steps);
  }
  ops.finish();
  LOCKSIM_ASSERT(out.ops.size() == out.lines.size());
  LOCKSIM_ASSERT(out.total_ops == static_cast<int64_t>(out.ops.size()) + out.skipped_ops);
  return out;
}

}  // namespace

EdnHistory parse_edn_history(std::string_view text, const std::string& source,
                             const TextDone& done) {
  try {
    return parse_edn_history(text, source, done, false);
  } catch (const IndicesOutOfOrder&) {
    // The first read's ops are gone with its stack: one history at a time.
    return parse_edn_history(text, source, done, true);
  }
}

EdnPart parse_edn_part(std::string_view text, const std::string& source, bool compact,
                       size_t ops_reserved, const TextDone& done) {
  EdnPart part;
  if (compact) {
    part.compact.reserve(ops_reserved);
  } else {
    part.history.ops.reserve(ops_reserved);
    part.history.lines.reserve(ops_reserved);
  }
  Reader r(text, source);
  OpCollector ops(r, part.history, false, compact ? &part.compact : nullptr);
  DoneSteps steps(r, done);
  read_bare_ops(r, ops, steps);
  ops.finish();
  ops.describe(part);
  part.end_line = r.line();
  const size_t kept = compact ? part.compact.size() : part.history.ops.size();
  // Pair: every client op went to one place, with its line.
  LOCKSIM_ASSERT(part.history.ops.size() == part.history.lines.size());
  LOCKSIM_ASSERT(part.history.total_ops == static_cast<int64_t>(kept) + part.history.skipped_ops);
  return part;
}

EdnHistory load_edn_history(const std::string& path) {
  return parse_edn_history(read_history_text(path), path);
}

}  // namespace locksim::history
