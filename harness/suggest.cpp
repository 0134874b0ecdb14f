#include "harness/suggest.h"

#include <algorithm>
#include <utility>

#include "env/assert.h"

namespace locksim::harness {

size_t edit_distance(std::string_view a, std::string_view b) {
  // One row of the table at a time: names are short, but a pasted argument
  // need not be.
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      const size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> nearest_names(std::string_view typo, const std::vector<std::string>& names,
                                       size_t count_max) {
  // Long inputs are not typos of a name; also bounds the work.
  constexpr size_t kTypoLengthMax = 200;
  if (typo.empty() || typo.size() > kTypoLengthMax) return {};
  std::vector<std::pair<size_t, size_t>> close;  // (distance, position in names)
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    const size_t d = edit_distance(typo, name);
    const size_t allowed = std::max<size_t>(2, std::max(typo.size(), name.size()) / 3);
    // Only for names long enough to mean something: "-h" is inside many typos.
    const bool contained =
        std::min(typo.size(), name.size()) >= 4 &&
        (name.find(typo) != std::string::npos || typo.find(name) != std::string_view::npos);
    if (d <= allowed || contained) close.emplace_back(d, i);
  }
  std::stable_sort(close.begin(), close.end());
  std::vector<std::string> out;
  for (size_t k = 0; k < close.size() && k < count_max; ++k) out.push_back(names[close[k].second]);
  LOCKSIM_ASSERT(out.size() <= count_max);
  return out;
}

std::string did_you_mean(const std::vector<std::string>& names) {
  if (names.empty()) return "";
  std::string out = "did you mean " + names.front();
  for (size_t i = 1; i < names.size(); ++i) {
    out += (i + 1 == names.size() ? " or " : ", ") + names[i];
  }
  return out + "?";
}

}  // namespace locksim::harness
