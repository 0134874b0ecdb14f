// The parser of the SQL subset in sql_statement.h: a tokenizer and one
// function per statement kind. Every failure is a ParseFailure carrying the
// text where parsing stopped, turned into MariaDB's 1064 message at the top.
#include <cctype>
#include <optional>
#include <stdexcept>

#include "sim/mysql/schema.h"
#include "sim/mysql/sql_statement.h"

namespace locksim::sim::mysql {

namespace {

struct Token {
  enum class Kind { kWord, kQuoted, kString, kNumber, kParam, kSymbol, kEnd };
  Kind kind = Kind::kEnd;
  std::string text;   // word (as written), string contents, digits or symbol
  size_t offset = 0;  // where it starts in the statement, for the message
};

struct ParseFailure {
  size_t offset;
};

// Valid SQL outside the subset (sql_statement.h): 1064 saying so, not a
// syntax error the user would look for in vain.
struct Refusal {
  std::string why;
};

char lower_char(char c) {
  return ascii_lower(c);
}

bool same_word(const std::string& a, const char* b) {
  size_t i = 0;
  for (; i < a.size() && b[i] != '\0'; ++i) {
    if (lower_char(a[i]) != lower_char(b[i])) return false;
  }
  return i == a.size() && b[i] == '\0';
}

// A quoted string: '' and backslash escapes as MySQL reads them.
Token read_string(const std::string& s, size_t& i) {
  Token t{Token::Kind::kString, "", i};
  const char quote = s[i++];
  while (i < s.size()) {
    char c = s[i++];
    if (c == '\\' && i < s.size()) {
      char e = s[i++];
      t.text += e == 'n' ? '\n' : e == 't' ? '\t' : e == '0' ? '\0' : e;
    } else if (c == quote) {
      if (i < s.size() && s[i] == quote) {
        t.text += quote;
        ++i;
      } else {
        return t;
      }
    } else {
      t.text += c;
    }
  }
  throw ParseFailure{t.offset};  // unterminated
}

std::vector<Token> tokenize(const std::string& s) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '\'' || c == '"') {
      out.push_back(read_string(s, i));
    } else if (c == '`') {
      size_t end = s.find('`', i + 1);
      if (end == std::string::npos) throw ParseFailure{i};
      out.push_back({Token::Kind::kQuoted, s.substr(i + 1, end - i - 1), i});
      i = end + 1;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = i;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
      out.push_back({Token::Kind::kNumber, s.substr(start, i - start), start});
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = i;
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
      out.push_back({Token::Kind::kWord, s.substr(start, i - start), start});
    } else if (c == '?') {
      out.push_back({Token::Kind::kParam, "?", i++});
    } else if ((c == '<' || c == '>' || c == '!') && i + 1 < s.size() &&
               (s[i + 1] == '=' || (c == '<' && s[i + 1] == '>'))) {
      out.push_back({Token::Kind::kSymbol, s.substr(i, 2), i});  // <= >= <> !=
      i += 2;
    } else if (std::string("(),=+-*;<>").find(c) != std::string::npos) {
      out.push_back({Token::Kind::kSymbol, std::string(1, c), i++});
    } else {
      throw ParseFailure{i};
    }
  }
  out.push_back({Token::Kind::kEnd, "", s.size()});
  return out;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  SqlStatement statement() {
    SqlStatement st;
    if (accept_word("BEGIN")) {
      st.kind = SqlStatement::Kind::kBegin;
    } else if (accept_word("START")) {
      expect_word("TRANSACTION");
      st.kind = SqlStatement::Kind::kBegin;
    } else if (accept_word("COMMIT")) {
      st.kind = SqlStatement::Kind::kCommit;
    } else if (accept_word("ROLLBACK")) {
      st.kind = SqlStatement::Kind::kRollback;
    } else if (accept_word("SELECT")) {
      select(st);
    } else if (accept_word("INSERT")) {
      insert(st);
    } else if (accept_word("UPDATE")) {
      update(st);
    } else if (accept_word("DELETE")) {
      expect_word("FROM");
      table();
      st.kind = SqlStatement::Kind::kDelete;
      where(st);
    } else {
      fail();
    }
    accept_symbol(";");
    if (peek().kind != Token::Kind::kEnd) fail();
    st.param_count = params_;
    return st;
  }

 private:
  const Token& peek() const { return t_[pos_]; }
  [[noreturn]] void fail() const { throw ParseFailure{peek().offset}; }
  bool accept_word(const char* w) {
    if (peek().kind != Token::Kind::kWord || !same_word(peek().text, w)) return false;
    ++pos_;
    return true;
  }
  void expect_word(const char* w) {
    if (!accept_word(w)) fail();
  }
  bool accept_symbol(const char* s) {
    if (peek().kind != Token::Kind::kSymbol || peek().text != s) return false;
    ++pos_;
    return true;
  }
  void expect_symbol(const char* s) {
    if (!accept_symbol(s)) fail();
  }

  // A column of t_tag_lock, by its index in table_columns().
  size_t column() {
    const Token& tok = peek();
    if (tok.kind != Token::Kind::kWord && tok.kind != Token::Kind::kQuoted) fail();
    std::optional<size_t> idx = column_index(tok.text);
    if (!idx) fail();
    ++pos_;
    return *idx;
  }
  // A column of a SELECT or INSERT list: its canonical name and its index.
  void list_column(SqlStatement& st) {
    const size_t idx = column();
    st.columns.emplace_back(table_columns()[idx].name);
    st.column_ids.push_back(idx);
  }

  void table() {
    const Token& tok = peek();
    if ((tok.kind != Token::Kind::kWord && tok.kind != Token::Kind::kQuoted) ||
        tok.text != kTableName) {
      fail();
    }
    ++pos_;
  }

  SqlOperand operand() {
    const Token tok = peek();
    SqlOperand op;
    if (tok.kind == Token::Kind::kParam) {
      op.param = params_++;
    } else if (tok.kind == Token::Kind::kString || tok.kind == Token::Kind::kNumber) {
      op.literal = tok.text;
    } else if (tok.kind == Token::Kind::kSymbol && tok.text == "-" &&
               t_[pos_ + 1].kind == Token::Kind::kNumber) {
      ++pos_;
      op.literal = "-" + t_[pos_].text;
    } else if (accept_word("NULL")) {
      return op;
    } else {
      fail();
    }
    ++pos_;
    return op;
  }

  void select(SqlStatement& st) {
    st.kind = SqlStatement::Kind::kSelect;
    if (accept_symbol("*")) {
      for (size_t i = 0; i < table_columns().size(); ++i) {
        st.columns.emplace_back(table_columns()[i].name);
        st.column_ids.push_back(i);
      }
    } else {
      do list_column(st);
      while (accept_symbol(","));
    }
    expect_word("FROM");
    table();
    where(st);
    if (accept_word("FOR")) {
      expect_word("UPDATE");
      st.lock = SqlLockMode::kUpdate;
    } else if (accept_word("LOCK")) {
      expect_word("IN");
      expect_word("SHARE");
      expect_word("MODE");
      st.lock = SqlLockMode::kShare;
    }
  }

  void insert(SqlStatement& st) {
    st.kind = SqlStatement::Kind::kInsert;
    expect_word("INTO");
    table();
    expect_symbol("(");
    do list_column(st);
    while (accept_symbol(","));
    expect_symbol(")");
    expect_word("VALUES");
    expect_symbol("(");
    do st.values.push_back(operand());
    while (accept_symbol(","));
    if (st.values.size() != st.columns.size()) fail();
    expect_symbol(")");
  }

  void update(SqlStatement& st) {
    st.kind = SqlStatement::Kind::kUpdate;
    table();
    expect_word("SET");
    do {
      SqlAssignment a;
      a.column = column();
      expect_symbol("=");
      const Token& tok = peek();
      if ((tok.kind == Token::Kind::kWord && !same_word(tok.text, "NULL")) ||
          tok.kind == Token::Kind::kQuoted) {
        a.base_column = column();
        const bool minus = accept_symbol("-");
        if (!minus) expect_symbol("+");
        if (peek().kind != Token::Kind::kNumber || peek().text.size() > 9) fail();
        a.delta = std::stoll(peek().text) * (minus ? -1 : 1);
        ++pos_;
      } else {
        a.value = operand();
      }
      st.set.push_back(std::move(a));
    } while (accept_symbol(","));
    where(st);
  }

  void where(SqlStatement& st) {
    expect_word("WHERE");
    do test(st);
    while (accept_word("AND"));
    if (accept_word("OR")) throw Refusal{"tests are joined by AND only"};
    choose_access(st);
  }

  void test(SqlStatement& st) {
    const size_t col = column();
    if (accept_word("BETWEEN")) {
      SqlOperand low = operand();
      expect_word("AND");  // BETWEEN's own AND, not the next test's
      st.where.push_back(SqlCondition{col, SqlCompare::kGe, std::move(low)});
      st.where.push_back(SqlCondition{col, SqlCompare::kLe, operand()});
      return;
    }
    const SqlCompare op = compare();
    st.where.push_back(SqlCondition{col, op, operand()});
  }

  SqlCompare compare() {
    if (accept_symbol("=")) return SqlCompare::kEq;
    if (accept_symbol("<")) return SqlCompare::kLt;
    if (accept_symbol("<=")) return SqlCompare::kLe;
    if (accept_symbol(">")) return SqlCompare::kGt;
    if (accept_symbol(">=")) return SqlCompare::kGe;
    if (peek().text == "<>" || peek().text == "!=" || accept_word("IN") || accept_word("LIKE") ||
        accept_word("IS") || accept_word("NOT")) {
      throw Refusal{"only =, <, <=, >, >= and BETWEEN compare a column"};
    }
    fail();
  }

  // The index MariaDB searches (sql_statement.h explains the order).
  static void choose_access(SqlStatement& st) {
    const size_t pk = kFindex;
    const size_t uniq = kFlockName;
    static const size_t modify_time = *column_index("Fmodify_time");
    auto find = [&](size_t col, bool equality) -> std::optional<size_t> {
      for (size_t i = 0; i < st.where.size(); ++i) {
        if (st.where[i].column == col && (st.where[i].op == SqlCompare::kEq) == equality) return i;
      }
      return std::nullopt;
    };
    if (auto i = find(pk, true)) {
      st.access = SqlAccess::kPkLookup;
      st.key = *i;
    } else if (auto j = find(uniq, true)) {
      st.access = SqlAccess::kUniqueLookup;
      st.key = *j;
    } else if (find(pk, false)) {
      st.access = SqlAccess::kPkRange;
    } else if (find(uniq, false)) {
      st.access = SqlAccess::kUniqueRange;
    } else if (find(modify_time, true) || find(modify_time, false)) {
      throw Refusal{"a WHERE that only idx_Fmodify_time could serve (that index is not simulated)"};
    } else {
      st.access = SqlAccess::kFullScan;
    }
  }

  std::vector<Token> t_;
  size_t pos_ = 0;
  size_t params_ = 0;
};

}  // namespace

std::variant<SqlStatement, SqlResult> parse_sql(const std::string& sql) {
  try {
    return Parser(tokenize(sql)).statement();
  } catch (const ParseFailure& f) {
    // MariaDB quotes the rest of the statement from where it stopped (80
    // characters at most) in its 1064 message.
    const std::string near = sql.substr(std::min(f.offset, sql.size()), 80);
    return SqlResult::error(sql_errno::kParseError,
                            "You have an error in your SQL syntax; check the manual that "
                            "corresponds to your MariaDB server version for the right syntax to "
                            "use near '" +
                                near + "' at line 1 (statement: " + sql + ")");
  } catch (const Refusal& r) {
    return SqlResult::error(sql_errno::kParseError,
                            "outside the SQL subset the simulated server understands "
                            "(sim/mysql/sql_statement.h): " +
                                r.why + " (statement: " + sql + ")");
  } catch (const std::out_of_range&) {
    return SqlResult::error(sql_errno::kParseError, "number out of range in: " + sql);
  }
}

}  // namespace locksim::sim::mysql
