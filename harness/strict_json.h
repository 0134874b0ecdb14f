// Reading the JSON files a user writes (scenarios, expectations) and the ones
// a sweep leaves behind (sweep.json), strictly: a key given twice in one
// object is an error, as a flag given twice is, instead of nlohmann's silent
// "the last one wins" — a file that says `"ttl": "2s"` and later `"ttl": "30s"`
// must not run with either without a word.
#pragma once

#include <cstddef>
#include <optional>
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

// The most bytes a JSON file locksim reads may hold: a scenario, an
// expectations file, a lock script, a sweep's sweep.json, agree's
// agree.json. The largest of them a user is likely to write is a few
// kilobytes; the bound is for a path that is no file at all
// (`--scenario /dev/zero`, a FIFO nobody closes), which would otherwise be
// read until memory ran out.
inline constexpr size_t kJsonFileBytesMax = size_t{16} << 20;

// Reads the file at `path` whole, at most `bytes_max` bytes. Returns nullopt
// when it cannot be opened: what that means (a scenario name that is none,
// a folder that holds no sweep) is the caller's to say. Throws ConfigError,
// one line starting with `named`:
//   "NAMED: expected a JSON file, got a directory": an ifstream opens a
//   directory and reads nothing, so the message would have been "invalid
//   JSON" about a file that is none;
//   "NAMED: larger than N bytes; ...": past `bytes_max`;
//   "NAMED: cannot read the file": a read that failed part way.
std::optional<std::string> read_json_file(const std::string& path, const std::string& named,
                                          size_t bytes_max = kJsonFileBytesMax);

}  // namespace locksim::harness
