#include "history/history_file.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <vector>

#include "env/assert.h"
#include "env/parse.h"
#include "history/history_io.h"

namespace locksim::history {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// The 1-based numbers of the lines parse_jsonl reads an op from, in order
// (it skips blank lines), so an op's line can be named as the EDN reader names it.
std::vector<int> op_lines(std::string_view text) {
  std::vector<int> out;
  int line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) out.push_back(line_no);
  }
  return out;
}

EdnHistory parse_jsonl_history(std::string_view text, const std::string& path) {
  History all;
  try {
    all = parse_jsonl(text, path);
  } catch (const std::runtime_error& e) {
    throw ConfigError(e.what());  // one line naming the path and line already
  }
  const std::vector<int> lines = op_lines(text);
  LOCKSIM_ASSERT_MSG(lines.size() == all.ops.size(), "one op per non-blank line");
  EdnHistory out;
  for (size_t i = 0; i < all.ops.size(); ++i) {
    ++out.total_ops;
    if (!is_client_op(all.ops[i])) {
      ++out.skipped_ops;  // as the EDN reader skips non-client ops
      continue;
    }
    out.ops.push_back(all.ops[i]);
    out.lines.push_back(lines[i]);
  }
  LOCKSIM_ASSERT(out.ops.size() == out.lines.size());
  return out;
}

}  // namespace

HistoryFormat detect_history_format(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && is_space(text[i])) ++i;
  if (i == text.size() || text[i] != '{') return HistoryFormat::kEdn;
  ++i;
  while (i < text.size() && is_space(text[i])) ++i;
  return i < text.size() && text[i] == '"' ? HistoryFormat::kJsonLines : HistoryFormat::kEdn;
}

std::string read_history_text(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ConfigError(path + ": expected a history file, got a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open the file");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw ConfigError(path + ": cannot read the file");
  return text;
}

EdnHistory load_history_file(const std::string& path) {
  const std::string text = read_history_text(path);
  if (detect_history_format(text) == HistoryFormat::kJsonLines) {
    return parse_jsonl_history(text, path);
  }
  return parse_edn_history(text, path);
}

}  // namespace locksim::history
