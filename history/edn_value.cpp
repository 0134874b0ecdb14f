#include "history/edn_value.h"

#include <array>
#include <cctype>
#include <charconv>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "env/parse.h"

namespace locksim::history::edn {

namespace {

// A byte as a message can show it on one line: itself, or \xNN.
std::string printable(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x20 && u < 0x7f ? std::string(1, c) : fmt::format("\\x{:02x}", u);
}

bool is_whitespace(char c) {
  return c == ' ' || c == ',' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

// A table, not a chain of comparisons: every byte of a token is tested, and
// tokens are most of a history's bytes.
constexpr std::array<bool, 256> kDelimiters = [] {
  std::array<bool, 256> t{};
  for (const char c : std::string_view(" ,\n\t\r\f\v()[]{}\";"))
    t[static_cast<unsigned char>(c)] = true;
  return t;
}();

bool is_delimiter(char c) {
  return kDelimiters[static_cast<unsigned char>(c)];
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool is_unicode_escape(std::string_view t) {
  if (t.size() != 5 || t[0] != 'u') return false;
  for (size_t i = 1; i < 5; ++i) {
    if (!std::isxdigit(static_cast<unsigned char>(t[i]))) return false;
  }
  return true;
}

// One multi-byte UTF-8 character (\é is a character literal too).
bool is_one_utf8_char(std::string_view t) {
  const auto b = static_cast<unsigned char>(t[0]);
  const size_t n = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
  return n > 1 && t.size() == n;
}

// A token as a message shows it: short, one line, odd bytes as \xNN.
std::string shorten(std::string_view t) {
  std::string out;
  for (size_t k = 0; k < t.size() && k < 20; ++k) out += printable(t[k]);
  return t.size() > 20 ? out + "..." : out;
}

// Reads t, [-]digits with the digits from `digits_from`, into `out` when it
// is at most 18 digits long (no int64 overflows there): what std::from_chars
// gives, at a quarter of its cost (its general loop was a tenth of reading a
// history). False, `out` untouched, for anything else (from_chars decides).
bool small_integer(std::string_view t, size_t digits_from, int64_t& out) {
  if (t.size() - digits_from > 18) return false;
  int64_t v = 0;
  for (size_t i = digits_from; i < t.size(); ++i) {
    if (!is_digit(t[i])) return false;
    v = v * 10 + (t[i] - '0');
  }
  out = digits_from == 1 ? -v : v;
  return true;
}

// Token `t` (non-empty, no delimiter in it) into `a`'s kind, integer and
// text, as read_atom reads a keyword, nil, a boolean or a [-]digits integer
// that fits int64 (read_number's kInt, keeping the token); false for
// anything else (+1, 1N, big integers and floats take the long way).
// `long_digits`: an integer past 18 digits is read with from_chars, else
// left to the long way too (read_flat_map's choice).
bool simple_atom(std::string_view t, bool long_digits, Atom& a) {
  LOCKSIM_ASSERT(!t.empty());
  a.integer = 0;
  a.text = {};
  if (t[0] == ':') {  // first: half of an op's forms are keywords
    // read_atom's rule; "::x" and ":" are its errors.
    if (t.size() == 1 || t[1] == ':') return false;
    a.kind = Value::Kind::kKeyword;
    a.text = t.substr(1);
    return true;
  }
  if (t == "nil") {
    a.kind = Value::Kind::kNil;
    return true;
  }
  if (t == "true" || t == "false") {
    a.kind = Value::Kind::kBool;
    a.integer = t == "true";
    return true;
  }
  const size_t digits_from = t[0] == '-' ? 1 : 0;
  if (t.size() == digits_from || !is_digit(t[digits_from])) return false;
  if (!small_integer(t, digits_from, a.integer)) {
    if (!long_digits) return false;
    const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), a.integer);
    if (ec != std::errc() || ptr != t.data() + t.size()) return false;
  }
  a.kind = Value::Kind::kInt;
  a.text = t;
  return true;
}

// [+-]?digits(.digits*)?([eE][+-]?digits)?M?
bool is_float(std::string_view t) {
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

// [+-]?digits/digits: Clojure's ratios, which Jepsen histories can hold.
bool is_ratio(std::string_view t) {
  const size_t slash = t.find('/');
  if (slash == std::string_view::npos || slash + 1 >= t.size()) return false;
  std::string_view a = t.substr(0, slash);
  if (!a.empty() && (a[0] == '+' || a[0] == '-')) a.remove_prefix(1);
  const std::string_view b = t.substr(slash + 1);
  return !a.empty() && a.find_first_not_of("0123456789") == std::string_view::npos &&
         b.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

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

void Reader::fail_at(int line, int column, const std::string& what) const {
  throw ConfigError(fmt::format("{}:{}:{}: {}", source_, line, column, what));
}

void Reader::skip_space() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == ' ' || c == ',') {  // most of a history's space: the same as advance(), cheaper
      ++pos_;
      ++column_;
    } else if (is_whitespace(c)) {
      advance();
    } else if (c == ';' || (c == '#' && peek(1) == '!')) {
      while (pos_ < text_.size() && text_[pos_] != '\n') advance();
    } else if (c == '#' && peek(1) == '_') {
      advance();
      advance();
      skip_space();
      if (at_end()) fail("expected a form after #_, got end of input");
      if (current() == ')' || current() == ']' || current() == '}') {
        fail(fmt::format("expected a form after #_, got '{}'", current()));
      }
      (void)read(0);
    } else {
      return;
    }
  }
}

Value Reader::read(int depth) {
  LOCKSIM_ASSERT(depth >= 0);
  LOCKSIM_ASSERT_MSG(!at_end(), "read() is called only where skip_space() found a form");
  if (depth > kDepthMax) {
    fail(fmt::format("collections nested deeper than {} levels", kDepthMax));
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
Value Reader::read_seq(Value v, Value::Kind kind, char close, int depth) {
  v.kind = kind;
  advance();  // the opening bracket
  while (next_item(kind, close, v.line, v.column)) v.items.push_back(read(depth + 1));
  if (kind == Value::Kind::kMap && v.items.size() % 2 != 0) {
    fail_at(v.line, v.column, "a map with a key but no value (odd number of forms)");
  }
  // Pair: every consumer walks a map two items at a time.
  LOCKSIM_ASSERT(kind != Value::Kind::kMap || v.items.size() % 2 == 0);
  return v;
}

bool Reader::next_item(Value::Kind kind, char close, int line, int column) {
  skip_space();
  if (at_end()) {
    fail(fmt::format("expected '{}' to close {} opened at {}:{}, got end of input", close,
                     kind_name(kind), line, column));
  }
  if (current() != close) return true;
  advance();
  return false;
}

// The run of non-delimiter bytes from here.
std::string_view Reader::token() {
  const size_t start = pos_;
  while (pos_ < text_.size() && !is_delimiter(text_[pos_])) ++pos_;
  // Not advance() byte by byte: a token holds no newline (a delimiter), so
  // only the column moves, by its length.
  column_ += static_cast<int>(pos_ - start);
  LOCKSIM_ASSERT(pos_ >= start && pos_ <= text_.size());
  LOCKSIM_ASSERT(column_ >= 1);
  return text_.substr(start, pos_ - start);
}

Value Reader::read_string(Value v) {
  LOCKSIM_ASSERT(current() == '"');
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
      fail(fmt::format("unknown escape '\\{}' in a string", printable(e)));
    }
  }
  advance();
  return v;
}

void Reader::read_hex4() {
  for (int i = 0; i < 4; ++i) {
    if (at_end() || !std::isxdigit(static_cast<unsigned char>(current()))) {
      fail("expected 4 hex digits after \\u");
    }
    advance();
  }
}

Value Reader::read_char(Value v) {
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
    LOCKSIM_ASSERT(!v.text.empty());
    return v;
  }
  fail_at(v.line, v.column, fmt::format("unknown character literal '\\{}'", shorten(t)));
}

// After '#': a set, ##Inf / ##NaN, or a tagged value.
Value Reader::read_dispatch(Value v, int depth) {
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
  v = read_tag();
  v.items.push_back(read(depth + 1));
  // Pair: a tagged value holds exactly the one form after its tag.
  LOCKSIM_ASSERT(v.items.size() == 1);
  return v;
}

Value Reader::read_tag() {
  LOCKSIM_ASSERT(current() == '#');
  Value v;
  v.line = line_;
  v.column = column_;
  advance();  // '#'
  const std::string_view tag = token();
  if (tag.empty() || !std::isalpha(static_cast<unsigned char>(tag[0]))) {
    fail_at(v.line, v.column, "expected a tag symbol after '#' (such as #inst)");
  }
  v.kind = Value::Kind::kTagged;
  v.text = std::string(tag);
  skip_space();
  if (at_end()) fail(fmt::format("expected a value after the tag #{}", shorten(tag)));
  return v;
}

Value Atom::value() const {
  Value v;
  v.kind = kind;
  v.integer = integer;
  v.line = line;
  v.column = column;
  v.text = std::string(text);
  return v;
}

std::optional<Atom> Reader::read_atom_fast() {
  LOCKSIM_ASSERT(!at_end());
  size_t end = pos_;
  while (end < text_.size() && !is_delimiter(text_[end])) ++end;
  const std::string_view t = text_.substr(pos_, end - pos_);
  if (t.empty() || t[0] == '#' || t[0] == '\\') return std::nullopt;  // dispatch, character
  Atom a;
  a.line = line_;
  a.column = column_;
  if (!simple_atom(t, true, a)) return std::nullopt;
  // A token holds no newline (a delimiter), so only the column moves.
  pos_ = end;
  column_ += static_cast<int>(t.size());
  LOCKSIM_ASSERT(column_ >= 1);
  return a;
}

// The atom at text_[p] for read_flat_map, as read_atom_fast reads it, with
// its column counted from the map's '{' at `start` (same line); moves p
// past it. False for anything else, or an integer past 18 digits.
bool Reader::read_flat_atom(size_t& p, size_t start, Atom& a) const {
  size_t end = p;
  while (end < text_.size() && !is_delimiter(text_[end])) ++end;
  const std::string_view t = text_.substr(p, end - p);
  if (t.empty() || !simple_atom(t, false, a)) return false;
  a.line = line_;
  a.column = column_ + static_cast<int>(p - start);
  p = end;
  return true;
}

bool Reader::read_flat_map(FlatPairs& out) {
  LOCKSIM_ASSERT(current() == '{');
  const size_t start = pos_;
  const auto blanks = [this](size_t p) {
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == ',')) ++p;
    return p;
  };
  size_t p = blanks(start + 1);
  out.count = 0;
  while (p < text_.size() && text_[p] != '}') {
    if (out.count == kFlatPairsMax) return false;
    Atom& key = out.keys[out.count];
    if (!read_flat_atom(p, start, key) || key.kind != Value::Kind::kKeyword) return false;
    p = blanks(p);
    if (p >= text_.size() || !read_flat_atom(p, start, out.values[out.count])) return false;
    ++out.count;
    p = blanks(p);
  }
  if (p >= text_.size()) return false;
  // Past the '}': the map held no newline, so only the column moves.
  column_ += static_cast<int>(p + 1 - start);
  pos_ = p + 1;
  LOCKSIM_ASSERT(out.count <= kFlatPairsMax && column_ >= 1);
  return true;
}

// nil, true, false, a number, a keyword or a symbol.
Value Reader::read_atom(Value v) {
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
    LOCKSIM_ASSERT(!v.text.empty());
    return v;
  }
  v.kind = Value::Kind::kSymbol;
  v.text = std::string(t);
  return v;
}

Value Reader::read_number(Value v, std::string_view t) {
  v.text = std::string(t);
  std::string_view digits = t;
  if (!digits.empty() && digits.back() == 'N') digits.remove_suffix(1);
  if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
  const bool integer =
      !digits.empty() &&
      digits.find_first_not_of("0123456789", digits[0] == '-') == std::string_view::npos &&
      digits != "-";
  if (integer) {
    LOCKSIM_ASSERT(!digits.empty());
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v.integer);
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

}  // namespace locksim::history::edn
