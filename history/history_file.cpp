#include "history/history_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
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

// A history file mapped read-only, so its text is read straight from the
// page cache (no copy) and the pages a parse is done with can be dropped
// from memory. mapped() is false when the path is not a regular file or
// mmap fails; the caller then reads it. A file truncated while mapped makes
// reading past its new end a SIGBUS: histories are not written while checked.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw ConfigError(path + ": cannot open the file");
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      size_ = static_cast<size_t>(st.st_size);
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        data_ = static_cast<const char*>(p);
        ::madvise(p, size_, MADV_SEQUENTIAL);  // read ahead; a hint only
      }
    }
    ::close(fd);  // the mapping keeps the file
    if (data_ == nullptr) size_ = 0;
  }
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  bool mapped() const { return data_ != nullptr; }
  std::string_view text() const { return {data_, size_}; }

  // Gives back the memory of the pages from the one holding `begin` to the
  // one before the page holding `end`; reading them again would fault them
  // back in from the file. Contiguous calls (each beginning where the last
  // ended) so give back every page behind them. The page holding `begin` may
  // also hold bytes before it, which another half of a split read may still
  // read: it faults them back in, never reads anything else (the mapping is
  // never written). No state, so two threads may call it at once.
  // Precondition: begin <= end <= size.
  void drop_range(size_t begin, size_t end) const {
    LOCKSIM_ASSERT(data_ != nullptr && begin <= end && end <= size_);
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    const size_t from = begin / page * page;
    const size_t to = end / page * page;
    if (to > from) ::madvise(const_cast<char*>(data_) + from, to - from, MADV_DONTNEED);
  }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
};

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

// The format of `text`, refusing a JSON array: read as EDN, it failed at its
// first key with "invalid keyword ':'", which names nothing to do.
HistoryFormat format_of(std::string_view text, const std::string& path) {
  const HistoryFormat f = detect_history_format(text);
  if (f == HistoryFormat::kJsonArray) {
    throw ConfigError(path +
                      ": a JSON array of ops; expected JSON lines, one op object per line as "
                      "in history.jsonl (jq -c '.[]' turns the array into lines), or EDN");
  }
  return f;
}

// The bytes of a UTF-8 byte-order mark some editors write first: a JSON
// lines file that began with one was read as EDN and failed with "expected an
// op map, got a symbol". Neither format has one.
size_t bom_bytes(std::string_view text) {
  return text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
}

EdnHistory parse_history_text(std::string_view text, const std::string& path) {
  text.remove_prefix(bom_bytes(text));
  if (format_of(text, path) == HistoryFormat::kJsonLines) return parse_jsonl_history(text, path);
  return parse_edn_history_split(text, path);
}

}  // namespace

HistoryFormat detect_history_format(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && is_space(text[i])) ++i;
  const bool array = i < text.size() && text[i] == '[';
  if (array) {
    ++i;
    while (i < text.size() && is_space(text[i])) ++i;
  }
  if (i == text.size() || text[i] != '{') return HistoryFormat::kEdn;
  ++i;
  while (i < text.size() && is_space(text[i])) ++i;
  if (i == text.size() || text[i] != '"') return HistoryFormat::kEdn;
  return array ? HistoryFormat::kJsonArray : HistoryFormat::kJsonLines;
}

std::string read_history_text(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ConfigError(path + ": expected a history file, got a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open the file");
  // In blocks: a byte at a time through istreambuf_iterator took most of a
  // second for a 57 MB history.
  std::string text;
  std::vector<char> block(size_t{1} << 16);
  while (in.read(block.data(), static_cast<std::streamsize>(block.size())) || in.gcount() > 0) {
    text.append(block.data(), static_cast<size_t>(in.gcount()));
    if (text.size() > kHistoryTextBytesMax) {
      throw ConfigError(path + ": more than " + std::to_string(kHistoryTextBytesMax) +
                        " bytes; expected a history (a regular file is read without this bound)");
    }
  }
  if (in.bad()) throw ConfigError(path + ": cannot read the file");
  return text;
}

EdnHistory load_history_file(const std::string& path) {
  std::error_code ec;
  std::optional<MappedFile> mapped;
  // Only a regular file is mapped: a pipe cannot be, and a directory or a
  // missing file is named by read_history_text.
  if (std::filesystem::is_regular_file(path, ec)) mapped.emplace(path);
  if (!mapped || !mapped->mapped()) {
    const std::string text = read_history_text(path);
    return parse_history_text(text, path);
  }
  const size_t bom = bom_bytes(mapped->text());
  const std::string_view text = mapped->text().substr(bom);
  if (format_of(text, path) == HistoryFormat::kJsonLines) return parse_jsonl_history(text, path);
  // The pages behind the parse are dropped as it goes, so a big history's
  // text and its ops are never in memory together (86 MB beside 144 MB for
  // 1 M ops). Offsets into `text` are the file's less the mark.
  const MappedFile& file = *mapped;
  return parse_edn_history_split(text, path, [&file, bom](size_t begin, size_t end) {
    file.drop_range(begin + bom, end + bom);
  });
}

}  // namespace locksim::history
