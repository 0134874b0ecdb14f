#include "cli/output_paths.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "env/atomic_file.h"
#include "env/parse.h"

namespace locksim::cli {

namespace {

// Why `path` cannot be opened for appending (created if missing), or
// nullopt when it can.
std::optional<std::string> cannot_open(const std::filesystem::path& path) {
  errno = 0;
  if (std::ofstream(path, std::ios::app | std::ios::binary)) return std::nullopt;
  return errno != 0 ? std::strerror(errno) : "cannot open it";
}

}  // namespace

void check_writable_file(const std::string& path, const std::string& flag) {
  if (path.empty()) return;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ConfigError(flag + ": expected a file to write, got the directory '" + path + "'");
  }
  // What write_file_atomically will open: the path itself when it writes in
  // place (/dev/stdout, a symlink), else the temporary file beside it.
  const std::string target = written_in_place(path) ? path : path + ".tmp";
  const bool existed = std::filesystem::exists(target, ec);
  if (const auto why = cannot_open(target)) {
    throw ConfigError(flag + ": cannot write '" + path + "': " + *why);
  }
  if (!existed) std::filesystem::remove(target, ec);
}

void make_out_dir(const std::string& dir, const std::string& flag) {
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw ConfigError(flag + ": cannot create directory '" + dir + "': " + ec.message());
  // A directory that exists but takes no files (no permission, /proc/1)
  // would fail only after the whole run, as an internal error: try now.
  const std::filesystem::path probe = std::filesystem::path(dir) / ".locksim-write-probe";
  if (const auto why = cannot_open(probe)) {
    throw ConfigError(flag + ": cannot write in directory '" + dir + "': " + *why);
  }
  std::filesystem::remove(probe, ec);
}

void make_out_dir(const std::string& dir, const std::string& flag,
                  const std::vector<std::string>& files) {
  make_out_dir(dir, flag);
  if (dir.empty()) return;
  for (const std::string& name : files) {
    check_writable_file((std::filesystem::path(dir) / name).string(), flag);
  }
}

int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace locksim::cli
