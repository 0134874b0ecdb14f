#include "env/atomic_file.h"

#include <fstream>
#include <stdexcept>

namespace locksim {

namespace {

// Writes all of `bytes` to `path` (truncating it), or throws naming it.
void write_all(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.flush();  // a full disk shows at the flush, not at the write
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace

bool written_in_place(const std::filesystem::path& path) {
  // A rename would replace a link or a device node itself with a regular
  // file (as root, `--html /dev/full` did), and a stream there is never
  // half-read as a finished file anyway.
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(path, ec);
  return !ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status);
}

void write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
  if (written_in_place(path)) {
    write_all(path, bytes);
    return;
  }
  const std::filesystem::path tmp = path.string() + ".tmp";
  write_all(tmp, bytes);
  std::filesystem::rename(tmp, path);
}

}  // namespace locksim
