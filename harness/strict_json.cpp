#include "harness/strict_json.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "env/assert.h"
#include "env/parse.h"

namespace locksim::harness {

namespace {

using Json = nlohmann::json;

// nlohmann keeps the last of two equal keys without a word; a setting given
// twice in a file is an error, as it is on the command line. A parser
// callback: it sees every key of every object as it is read.
class RepeatedKeyGuard {
 public:
  explicit RepeatedKeyGuard(const std::string& source) : source_(source) {}

  bool operator()(int depth, Json::parse_event_t event, Json& parsed) {
    // No locksim file nests more than a few levels; a deeper value would
    // only overflow the stack of whatever prints it back (nlohmann's dump
    // recurses), so it is refused as it is read.
    if (depth > kJsonDepthMax) {
      throw ConfigError(source_ + ": nested deeper than " + std::to_string(kJsonDepthMax) +
                        " levels; no locksim file needs more");
    }
    if (event == Json::parse_event_t::object_start) {
      // The new object's path is the key it is the value of ("" at the top).
      objects_.push_back({objects_.empty() ? "" : last_path_, {}});
    } else if (event == Json::parse_event_t::object_end) {
      LOCKSIM_ASSERT(!objects_.empty());
      objects_.pop_back();
    } else if (event == Json::parse_event_t::key) {
      LOCKSIM_ASSERT(!objects_.empty() && parsed.is_string());
      Object& o = objects_.back();
      const std::string& key = parsed.get_ref<const std::string&>();
      // A key with a newline is shown escaped: the error stays one line.
      const bool plain = key.find_first_of("\n\r") == std::string::npos;
      last_path_ = (o.path.empty() ? "" : o.path + ".") + (plain ? key : Json(key).dump());
      if (!o.keys.insert(key).second) {
        throw ConfigError(source_ + ": " + last_path_ + ": given twice; give each key once");
      }
    }
    return true;
  }

 private:
  struct Object {
    std::string path;
    std::set<std::string> keys;
  };
  const std::string& source_;
  std::vector<Object> objects_;
  std::string last_path_;
};

}  // namespace

std::optional<std::string> read_json_file(const std::string& path, const std::string& named,
                                          size_t bytes_max) {
  LOCKSIM_ASSERT(bytes_max > 0);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ConfigError(named + ": expected a JSON file, got a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  // In blocks, so a small file costs a small buffer; reading one byte past
  // the bound tells a file of exactly bytes_max from a longer one.
  std::string text;
  std::array<char, 1 << 16> block;
  while (text.size() <= bytes_max) {
    const size_t want = std::min(block.size(), bytes_max + 1 - text.size());
    in.read(block.data(), static_cast<std::streamsize>(want));
    text.append(block.data(), static_cast<size_t>(in.gcount()));
    if (!in) break;
  }
  if (in.bad()) throw ConfigError(named + ": cannot read the file");
  if (text.size() > bytes_max) {
    throw ConfigError(named + ": larger than " + std::to_string(bytes_max) +
                      " bytes; expected a JSON file (no locksim file needs more)");
  }
  LOCKSIM_ASSERT(text.size() <= bytes_max);
  return text;
}

Json parse_strict_json(std::string_view text, const std::string& source) {
  try {
    return Json::parse(text.begin(), text.end(), RepeatedKeyGuard(source));
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for 1E400
    std::string what = e.what();
    for (char& c : what) c = c == '\n' ? ' ' : c;
    throw ConfigError(source + ": invalid JSON: " + what);
  }
}

}  // namespace locksim::harness
