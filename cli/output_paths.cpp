#include "cli/output_paths.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "env/parse.h"

namespace locksim::cli {

void check_writable_file(const std::string& path, const std::string& flag) {
  if (path.empty()) return;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ConfigError(flag + ": expected a file to write, got the directory '" + path + "'");
  }
  // A symlink or no regular file (/dev/stdout, a FIFO): written in place, so opened
  // in place to check (write_file_atomically).
  const auto status = std::filesystem::symlink_status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    errno = 0;
    if (!std::ofstream(path, std::ios::app | std::ios::binary)) {
      throw ConfigError(flag + ": cannot write '" + path +
                        "': " + (errno != 0 ? std::strerror(errno) : "cannot open it"));
    }
    return;
  }
  const std::string probe = path + ".tmp";
  const bool existed = std::filesystem::exists(probe, ec);
  errno = 0;
  if (!std::ofstream(probe, std::ios::app | std::ios::binary)) {
    throw ConfigError(flag + ": cannot write '" + path +
                      "': " + (errno != 0 ? std::strerror(errno) : "cannot open the file"));
  }
  if (!existed) std::filesystem::remove(probe, ec);
}

void make_out_dir(const std::string& dir, const std::string& flag) {
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw ConfigError(flag + ": cannot create directory '" + dir + "': " + ec.message());
  // A directory that exists but takes no files (no permission, /proc/1)
  // would fail only after the whole run, as an internal error: try now.
  const std::filesystem::path probe = std::filesystem::path(dir) / ".locksim-write-probe";
  errno = 0;
  if (!std::ofstream(probe, std::ios::app | std::ios::binary)) {
    throw ConfigError(flag + ": cannot write in directory '" + dir +
                      "': " + (errno != 0 ? std::strerror(errno) : "cannot create a file"));
  }
  std::filesystem::remove(probe, ec);
}

int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace locksim::cli
