#include "harness/edn_history.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "env/assert.h"
#include "env/parse.h"

namespace locksim::harness {

namespace {

// One EDN value. Only what op maps need is kept precisely; everything else
// is parsed (so it is validated) and then mostly ignored.
struct Value {
  enum class Kind {
    kNil,
    kBool,
    kInt,
    kBigInt,
    kFloat,
    kString,
    kChar,
    kKeyword,
    kSymbol,
    kList,
    kVector,
    kMap,
    kSet,
    kTagged,
  };
  Kind kind = Kind::kNil;
  std::string text;  // string contents; keyword/symbol name (no ':'); tag; number token
  int64_t integer = 0;
  std::vector<Value> items;  // collections (a map as k, v, k, v, ...); a tagged value's one item
  int line = 0;
  int column = 0;
};

const char* kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::kNil:
      return "nil";
    case Value::Kind::kBool:
      return "a boolean";
    case Value::Kind::kInt:
    case Value::Kind::kBigInt:
      return "an integer";
    case Value::Kind::kFloat:
      return "a number";
    case Value::Kind::kString:
      return "a string";
    case Value::Kind::kChar:
      return "a character";
    case Value::Kind::kKeyword:
      return "a keyword";
    case Value::Kind::kSymbol:
      return "a symbol";
    case Value::Kind::kList:
      return "a list";
    case Value::Kind::kVector:
      return "a vector";
    case Value::Kind::kMap:
      return "a map";
    case Value::Kind::kSet:
      return "a set";
    case Value::Kind::kTagged:
      return "a tagged value";
  }
  return "a value";
}

// The value as a message shows it: short, one line.
std::string shown(const Value& v) {
  std::string s;
  switch (v.kind) {
    case Value::Kind::kKeyword:
      s = ":" + v.text;
      break;
    case Value::Kind::kSymbol:
    case Value::Kind::kInt:
    case Value::Kind::kBigInt:
    case Value::Kind::kFloat:
      s = v.text;
      break;
    case Value::Kind::kString:
      s = "\"" + v.text + "\"";
      break;
    case Value::Kind::kBool:
      s = v.integer ? "true" : "false";
      break;
    default:
      return kind_name(v.kind);
  }
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

bool is_whitespace(char c) {
  return c == ' ' || c == ',' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

bool is_delimiter(char c) {
  return is_whitespace(c) || c == '(' || c == ')' || c == '[' || c == ']' || c == '{' || c == '}' ||
         c == '"' || c == ';';
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

class Reader {
 public:
  Reader(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  [[noreturn]] void fail_at(int line, int column, const std::string& what) const {
    throw ConfigError(fmt::format("{}:{}:{}: {}", source_, line, column, what));
  }
  [[noreturn]] void fail(const std::string& what) const { fail_at(line_, column_, what); }

  // Skips whitespace, commas, ; and #! comments, and #_ discarded forms.
  void skip_space() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (is_whitespace(c)) {
        advance();
      } else if (c == ';' || (c == '#' && peek(1) == '!')) {
        while (pos_ < text_.size() && text_[pos_] != '\n') advance();
      } else if (c == '#' && peek(1) == '_') {
        advance();
        advance();
        skip_space();
        if (at_end()) fail("expected a form after #_, got end of input");
        (void)read(0);
      } else {
        return;
      }
    }
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char current() const { return text_[pos_]; }
  int line() const { return line_; }
  int column() const { return column_; }
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }

  // Reads one value; the caller has skipped space and checked !at_end().
  Value read(int depth) {
    if (depth > kEdnDepthMax) {
      fail(fmt::format("collections nested deeper than {} levels", kEdnDepthMax));
    }
    Value v;
    v.line = line_;
    v.column = column_;
    const char c = current();
    switch (c) {
      case '(':
        return read_seq(std::move(v), Value::Kind::kList, ')', depth);
      case '[':
        return read_seq(std::move(v), Value::Kind::kVector, ']', depth);
      case '{':
        return read_seq(std::move(v), Value::Kind::kMap, '}', depth);
      case ')':
      case ']':
      case '}':
        fail(fmt::format("unexpected '{}' with nothing open to close", c));
      case '"':
        return read_string(std::move(v));
      case '\\':
        return read_char(std::move(v));
      case '#':
        return read_dispatch(std::move(v), depth);
      default:
        return read_atom(std::move(v));
    }
  }

  // After the opening bracket of a collection: reads items until `close`.
  Value read_seq(Value v, Value::Kind kind, char close, int depth) {
    v.kind = kind;
    advance();  // the opening bracket
    for (;;) {
      skip_space();
      if (at_end()) {
        fail(fmt::format("expected '{}' to close {} opened at {}:{}, got end of input", close,
                         kind_name(kind), v.line, v.column));
      }
      if (current() == close) break;
      v.items.push_back(read(depth + 1));
    }
    advance();
    if (kind == Value::Kind::kMap && v.items.size() % 2 != 0) {
      fail_at(v.line, v.column, "a map with a key but no value (odd number of forms)");
    }
    return v;
  }

 private:
  char peek(size_t ahead) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }

  // The run of non-delimiter bytes from here.
  std::string_view token() {
    const size_t start = pos_;
    while (pos_ < text_.size() && !is_delimiter(text_[pos_])) advance();
    return text_.substr(start, pos_ - start);
  }

  Value read_string(Value v) {
    v.kind = Value::Kind::kString;
    advance();  // "
    for (;;) {
      if (at_end()) fail_at(v.line, v.column, "a string opened here is never closed");
      const char c = current();
      if (c == '"') break;
      if (c != '\\') {
        v.text += c;
        advance();
        continue;
      }
      advance();
      if (at_end()) fail_at(v.line, v.column, "a string opened here is never closed");
      const char e = current();
      const std::string_view from = "\"\\ntrbf";
      const std::string_view to = "\"\\\n\t\r\b\f";
      if (const size_t k = from.find(e); k != std::string_view::npos) {
        v.text += to[k];
        advance();
      } else if (e == 'u') {
        advance();
        read_hex4();
        v.text += '?';  // the code point itself is never needed
      } else {
        fail(fmt::format("unknown escape '\\{}' in a string", e));
      }
    }
    advance();
    return v;
  }

  void read_hex4() {
    for (int i = 0; i < 4; ++i) {
      if (at_end() || !std::isxdigit(static_cast<unsigned char>(current()))) {
        fail("expected 4 hex digits after \\u");
      }
      advance();
    }
  }

  Value read_char(Value v) {
    v.kind = Value::Kind::kChar;
    advance();  // backslash
    if (at_end()) fail("expected a character after '\\', got end of input");
    // The first byte is taken even when it is a delimiter: \( \" \space.
    const size_t start = pos_;
    advance();
    while (pos_ < text_.size() && !is_delimiter(text_[pos_])) advance();
    const std::string_view t = text_.substr(start, pos_ - start);
    static const std::set<std::string_view> kNames = {"newline", "space",    "tab",
                                                      "return",  "formfeed", "backspace"};
    if (t.size() == 1 || kNames.count(t) > 0 || is_unicode_escape(t) || is_one_utf8_char(t)) {
      v.text = std::string(t);
      return v;
    }
    fail_at(v.line, v.column, fmt::format("unknown character literal '\\{}'", shorten(t)));
  }

  static bool is_unicode_escape(std::string_view t) {
    if (t.size() != 5 || t[0] != 'u') return false;
    for (size_t i = 1; i < 5; ++i) {
      if (!std::isxdigit(static_cast<unsigned char>(t[i]))) return false;
    }
    return true;
  }

  static bool is_one_utf8_char(std::string_view t) {
    const auto b = static_cast<unsigned char>(t[0]);
    const size_t n = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
    return n > 1 && t.size() == n;
  }

  static std::string shorten(std::string_view t) {
    return t.size() > 20 ? std::string(t.substr(0, 17)) + "..." : std::string(t);
  }

  Value read_dispatch(Value v, int depth) {
    const char next = peek(1);
    if (next == '{') {
      advance();  // '#'; read_seq consumes '{'
      return read_seq(std::move(v), Value::Kind::kSet, '}', depth);
    }
    if (next == '#') {  // ##Inf ##-Inf ##NaN
      advance();
      advance();
      const std::string_view t = token();
      if (t != "Inf" && t != "-Inf" && t != "NaN") {
        fail_at(v.line, v.column, fmt::format("unknown symbolic value '##{}'", shorten(t)));
      }
      v.kind = Value::Kind::kFloat;
      v.text = "##" + std::string(t);
      return v;
    }
    advance();  // '#'
    const std::string_view tag = token();
    if (tag.empty() || !std::isalpha(static_cast<unsigned char>(tag[0]))) {
      fail_at(v.line, v.column, "expected a tag symbol after '#' (such as #inst)");
    }
    v.kind = Value::Kind::kTagged;
    v.text = std::string(tag);
    skip_space();
    if (at_end()) fail(fmt::format("expected a value after the tag #{}", shorten(tag)));
    v.items.push_back(read(depth + 1));
    return v;
  }

  Value read_atom(Value v) {
    const std::string_view t = token();
    if (t.empty()) fail(fmt::format("unexpected character '{}'", current()));
    if (t == "nil") return v;
    if (t == "true" || t == "false") {
      v.kind = Value::Kind::kBool;
      v.integer = t == "true";
      return v;
    }
    const bool signed_digit = (t[0] == '+' || t[0] == '-') && t.size() > 1 && is_digit(t[1]);
    if (is_digit(t[0]) || signed_digit) return read_number(std::move(v), t);
    if (t[0] == ':') {
      if (t.size() == 1 || t[1] == ':') {
        fail_at(v.line, v.column, fmt::format("invalid keyword '{}'", shorten(t)));
      }
      v.kind = Value::Kind::kKeyword;
      v.text = std::string(t.substr(1));
      return v;
    }
    v.kind = Value::Kind::kSymbol;
    v.text = std::string(t);
    return v;
  }

  Value read_number(Value v, std::string_view t) {
    v.text = std::string(t);
    std::string_view digits = t;
    if (!digits.empty() && digits.back() == 'N') digits.remove_suffix(1);
    if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
    const bool integer =
        !digits.empty() &&
        digits.find_first_not_of("0123456789", digits[0] == '-') == std::string_view::npos &&
        digits != "-";
    if (integer) {
      const auto [ptr, ec] =
          std::from_chars(digits.data(), digits.data() + digits.size(), v.integer);
      v.kind = ec == std::errc() && ptr == digits.data() + digits.size() ? Value::Kind::kInt
                                                                         : Value::Kind::kBigInt;
      return v;
    }
    if (is_float(t) || is_ratio(t)) {
      v.kind = Value::Kind::kFloat;
      return v;
    }
    fail_at(v.line, v.column, fmt::format("invalid number '{}'", shorten(t)));
  }

  // [+-]?digits(.digits*)?([eE][+-]?digits)?M?
  static bool is_float(std::string_view t) {
    size_t i = 0;
    auto digits = [&] {
      const size_t s = i;
      while (i < t.size() && is_digit(t[i])) ++i;
      return i > s;
    };
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (!digits()) return false;
    if (i < t.size() && t[i] == '.') {
      ++i;
      digits();
    }
    if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
      ++i;
      if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
      if (!digits()) return false;
    }
    if (i < t.size() && t[i] == 'M') ++i;
    return i == t.size();
  }

  // [+-]?digits/digits (Clojure's ratios, which Jepsen histories can hold)
  static bool is_ratio(std::string_view t) {
    const size_t slash = t.find('/');
    if (slash == std::string_view::npos || slash + 1 >= t.size()) return false;
    std::string_view a = t.substr(0, slash);
    if (!a.empty() && (a[0] == '+' || a[0] == '-')) a.remove_prefix(1);
    const std::string_view b = t.substr(slash + 1);
    return !a.empty() && a.find_first_not_of("0123456789") == std::string_view::npos &&
           b.find_first_not_of("0123456789") == std::string_view::npos;
  }

  std::string_view text_;
  const std::string& source_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

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
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ConfigError(path + ": expected a history file, got a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open the file");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw ConfigError(path + ": cannot read the file");
  return parse_edn_history(text, path);
}

}  // namespace locksim::harness
