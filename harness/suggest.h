// "Did you mean ...?": the names nearest to a mistyped one, so an error can
// name the few a user probably meant instead of listing every name there is
// (a wrong scenario name used to print all 42).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace locksim::harness {

// The Levenshtein distance (insert, delete, substitute: one each), on bytes.
size_t edit_distance(std::string_view a, std::string_view b);

// Up to `count_max` of `names` close enough to `typo` to be what was meant,
// nearest first (ties in the order of `names`). Close enough: at most a third
// of the longer name's length apart (at least 2 edits allowed), or one name
// holds the other ("gc-pause" for "set-nx-lua-gc-pause"). May be empty.
std::vector<std::string> nearest_names(std::string_view typo, const std::vector<std::string>& names,
                                       size_t count_max);

// "did you mean A?" / "did you mean A, B or C?"; empty when `names` is.
std::string did_you_mean(const std::vector<std::string>& names);

}  // namespace locksim::harness
