// The split read of a big EDN history (parse_edn_history_split): why it is
// exact is at its declaration; here, how the halves are read and joined.
#include <algorithm>
#include <exception>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

#include "env/assert.h"
#include "history/edn_history.h"
#include "history/edn_part.h"

namespace locksim::history {

namespace {

bool is_edn_space(char c) {
  return c == ' ' || c == ',' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Whether the text's first form is certainly an op map or a tagged record,
// so parse_edn_history reads it as bare op maps, not as one vector of them.
// A comment or a #_ first is not looked behind: such a file is read in one
// piece.
bool starts_with_op(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && is_edn_space(text[i])) ++i;
  if (i == text.size()) return false;
  if (text[i] == '{') return true;
  return text[i] == '#' && i + 1 < text.size() && is_alpha(text[i + 1]);
}

size_t ops_reserved_for(size_t bytes) {
  return std::min<size_t>(bytes / kOpBytesMin + 1, kOpsReservedMax);
}

// The TextDone of a part that starts at `base`, telling `done` the ranges.
TextDone part_done(const TextRangeDone& done, size_t base) {
  if (!done) return {};
  return [&done, base, last = base](size_t offset) mutable {
    // A read that starts again from 0 (see TextDone) starts its ranges again.
    if (base + offset < last) last = base;
    done(last, base + offset);
    last = base + offset;
  };
}

// Whether one read of the whole would give the two halves' ops joined: the
// :index rules that span ops (all or none indexed; unique) hold across the
// cut. Unsorted indices are not merged here: that file is read again whole.
bool joins(const EdnPart& first, const EdnPart& second) {
  if (first.history.total_ops == 0 || second.history.total_ops == 0) return true;
  if (first.indexed != second.indexed) return false;
  return !first.indexed || first.index_max < second.index_min;
}

// The first half's history with the second's ops appended, their lines and
// (unindexed) positions moved past the first's.
EdnHistory join(EdnPart first, EdnPart second) {
  EdnHistory out = std::move(first.history);
  const int lines_before = first.end_line - 1;
  const int64_t ops_before = out.total_ops;
  // Within the first half's reservation (for the whole text), so no copy.
  out.ops.reserve(out.ops.size() + second.compact.size());
  out.lines.reserve(out.lines.size() + second.compact.size());
  for (const PartOp& p : second.compact) {
    Op& op = out.ops.emplace_back();
    op.index = second.indexed ? p.index : p.index + ops_before;
    op.time_ns = p.time_ns;
    op.process = p.process;
    op.client = -1;
    op.type = static_cast<OpType>(p.type);
    op.f = static_cast<OpF>(p.f);
    out.lines.push_back(p.line + lines_before);
  }
  out.total_ops += second.history.total_ops;
  out.skipped_ops += second.history.skipped_ops;
  // Pair with parse_edn_history's own: every kept op has its line.
  LOCKSIM_ASSERT(out.ops.size() == out.lines.size());
  LOCKSIM_ASSERT(out.total_ops == static_cast<int64_t>(out.ops.size()) + out.skipped_ops);
  return out;
}

EdnHistory parse_whole(std::string_view text, const std::string& source,
                       const TextRangeDone& done) {
  return parse_edn_history(text, source, part_done(done, 0));
}

}  // namespace

size_t edn_split_point(std::string_view text, size_t split_bytes_min) {
  if (text.size() < std::max<size_t>(split_bytes_min, 2) || !starts_with_op(text)) {
    return std::string_view::npos;
  }
  const size_t end = std::min(text.size() - 1, text.size() / 2 + kSplitSearchMax);
  for (size_t i = text.find('\n', text.size() / 2); i < end; i = text.find('\n', i + 1)) {
    if (text[i + 1] == '{' || text[i + 1] == '#') return i + 1;
  }
  return std::string_view::npos;
}

EdnHistory parse_edn_history_split(std::string_view text, const std::string& source,
                                   const TextRangeDone& done, size_t split_bytes_min) {
  const size_t cut = edn_split_point(text, split_bytes_min);
  if (cut == std::string_view::npos) return parse_whole(text, source, done);
  return parse_edn_history_cut(text, source, cut, done);
}

EdnHistory parse_edn_history_cut(std::string_view text, const std::string& source, size_t cut,
                                 const TextRangeDone& done) {
  LOCKSIM_ASSERT(cut > 0 && cut < text.size() && text[cut - 1] == '\n');
  // Any failure in a half, whatever it is, sends the text to the one-piece
  // read, which fails (or not) exactly as it would have alone.
  std::optional<EdnPart> second;
  std::optional<std::thread> reader;
  try {
    reader.emplace([&] {
      try {
        second = parse_edn_part(text.substr(cut), source, true, ops_reserved_for(text.size() - cut),
                                part_done(done, cut));
      } catch (...) {
        second.reset();
      }
    });
  } catch (const std::system_error&) {
    return parse_whole(text, source, done);  // no thread to be had: one piece, the same result
  }
  std::optional<EdnPart> first;
  try {
    // The first half's ops are the result's, so it reserves for the whole.
    first = parse_edn_part(text.substr(0, cut), source, false, ops_reserved_for(text.size()),
                           part_done(done, 0));
  } catch (...) {
    first.reset();
  }
  reader->join();
  if (first && second && joins(*first, *second)) return join(std::move(*first), std::move(*second));
  // Their memory back before the second read.
  first.reset();
  second.reset();
  return parse_whole(text, source, done);
}

}  // namespace locksim::history
