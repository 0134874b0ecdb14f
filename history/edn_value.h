// A small, strict EDN reader (https://github.com/edn-format/edn): values as a
// tree, each with the line and column it starts at, so every error can say
// where. It exists for edn_history.h (Jepsen histories); it reads all of EDN
// (strings, characters, numbers, keywords, symbols, lists, vectors, maps,
// sets, #tagged values, ##Inf/##NaN, comments, #_ discards) plus Clojure's
// ratios, so any value a Jepsen op holds is read, even if then ignored.
//
// Errors throw ConfigError "SOURCE:LINE:COLUMN: what was expected, got what".
// Limits: nesting depth kDepthMax (the reader recurses); nothing else,
// the text is already in memory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "env/assert.h"

namespace locksim::history::edn {

inline constexpr int kDepthMax = 200;  // nesting of collections

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
  // String contents (escapes decoded, \uXXXX as '?': never needed); keyword
  // or symbol name without ':'; the tag; a number's token.
  std::string text;
  int64_t integer = 0;       // kInt (fits int64), kBool (0 or 1)
  std::vector<Value> items;  // collections (a map as k, v, k, v, ...); a tagged value's one item
  int line = 0;              // where the value starts, 1-based
  int column = 0;
};

// A value read without building a Value: nil, a boolean, an integer that
// fits int64, or a keyword; what an op map's keys and fields are. `text`
// points into the reader's text, so it is valid only while that is.
struct Atom {
  Value::Kind kind = Value::Kind::kNil;  // kNil, kBool, kInt or kKeyword
  int64_t integer = 0;                   // kInt, kBool (0 or 1)
  std::string_view text;                 // kKeyword: the name; kInt: the token
  int line = 0;                          // where it starts, 1-based
  int column = 0;

  Value value() const;  // the Value read() would have made of it
};

const char* kind_name(Value::Kind k);  // "a map", "a keyword", "nil", ...
// The value as a message shows it: ":done", "42", "\"text\"", "a vector"; one
// line, at most 40 characters.
std::string shown(const Value& v);

// Reads values one at a time from `text`, which must outlive the reader.
class Reader {
 public:
  Reader(std::string_view text, std::string source) : text_(text), source_(std::move(source)) {}

  [[noreturn]] void fail_at(int line, int column, const std::string& what) const;
  [[noreturn]] void fail(const std::string& what) const { fail_at(line_, column_, what); }

  // Skips whitespace, commas, ; and #! comments, and #_ discarded forms.
  void skip_space();
  bool at_end() const { return pos_ >= text_.size(); }
  // The next byte. Precondition: !at_end().
  char current() const {
    LOCKSIM_ASSERT(pos_ < text_.size());
    return text_[pos_];
  }
  int line() const { return line_; }
  size_t offset() const { return pos_; }  // bytes of the text read so far
  int column() const { return column_; }
  // Moves past current(). Precondition: !at_end().
  void advance() {
    LOCKSIM_ASSERT_MSG(pos_ < text_.size(), "the reader moved past the end of its input");
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
    LOCKSIM_ASSERT(line_ >= 1 && column_ >= 1);
  }

  // The byte `ahead` places after current(), or '\0' past the end.
  char peek(size_t ahead) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }

  // Reads one value at nesting `depth`. Precondition: skip_space() was called
  // and !at_end().
  Value read(int depth);

  // The next form as an Atom when it is one (exactly as read() would read
  // it), or nullopt having read nothing: anything else, and anything read()
  // would reject, is left to read(). Never fails. Precondition: skip_space()
  // was called and !at_end().
  std::optional<Atom> read_atom_fast();

  // The pairs of a flat map (read_flat_map). Kept by the caller and reused:
  // a million op maps would otherwise construct 32 Atoms each.
  static constexpr int kFlatPairsMax = 16;  // an op map has 6 or 7 keys
  struct FlatPairs {
    Atom keys[kFlatPairsMax];
    Atom values[kFlatPairsMax];
    int count = 0;
  };

  // Reads the map whose '{' is current() when it is flat: on one line, its
  // only space ' ' and ',', every key a keyword and every value an atom that
  // read_atom_fast reads (an integer of at most 18 digits), at most
  // kFlatPairsMax pairs; each pair exactly as read_atom_fast would read it,
  // in order, into `out`. Otherwise returns false having read nothing (`out`
  // is then undefined), for read() or a caller's own walk to read it the
  // long way, errors and all. What nearly every op map of a history is
  // (`{:index 5, :time 5000, :process 3, :type :ok, :f :acquire, :value
  // nil}`), read without a call per byte or per form: over half the time of
  // reading a history went to that. Precondition: current() is '{'.
  bool read_flat_map(FlatPairs& out);

  // For a caller that takes a collection apart as it reads it, instead of
  // building its items (edn_history.cpp reads a million op maps this way):
  // skips space, then returns false at `close` (consumed) and true when an
  // item follows. At end of input, fails naming the collection of `kind`
  // opened at (line, column), with the words read() uses. Precondition: the
  // opening bracket was consumed.
  bool next_item(Value::Kind kind, char close, int line, int column);

  // Reads a tag (#inst, #jepsen.history.Op) and the space after it, leaving
  // the reader at the tagged form: a kTagged value without its item. Fails
  // as read() does on a bad tag or end of input. Precondition: current() is
  // '#' and peek(1) is none of '{' '#' '_' '!' (a set, ##Inf, and the two
  // things skip_space() skips).
  Value read_tag();

 private:
  Value read_seq(Value v, Value::Kind kind, char close, int depth);
  std::string_view token();
  Value read_string(Value v);
  void read_hex4();
  Value read_char(Value v);
  Value read_dispatch(Value v, int depth);
  Value read_atom(Value v);
  Value read_number(Value v, std::string_view t);
  bool read_flat_atom(size_t& p, size_t start, Atom& a) const;

  std::string_view text_;
  std::string source_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace locksim::history::edn
