// Reading the JSON files a user writes (scenarios, expectations) and the ones
// a sweep leaves behind (sweep.json), strictly: a key given twice in one
// object is an error, as a flag given twice is, instead of nlohmann's silent
// "the last one wins" — a file that says `"ttl": "2s"` and later `"ttl": "30s"`
// must not run with either without a word.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace locksim::harness {

// How deep arrays and objects may nest in a file locksim reads.
inline constexpr int kJsonDepthMax = 64;

// Parses `text`. Throws ConfigError, one line naming `source`:
//   "SOURCE: nested deeper than 64 levels; ..." for a value nested deeper
//   than kJsonDepthMax;
//   "SOURCE: invalid JSON: <nlohmann's message>" for text that is not JSON;
//   "SOURCE: PATH: given twice; give each key once" for a repeated key,
//   PATH the dotted path of the key ("redis.timeout").
nlohmann::json parse_strict_json(std::string_view text, const std::string& source);

// Throws ConfigError "NAMED: expected a JSON file, got a directory" when
// `path` is a directory: an ifstream opens one, reads nothing, and the
// message would have been "invalid JSON" about a file that is none.
void refuse_directory(const std::string& path, const std::string& named);

}  // namespace locksim::harness
