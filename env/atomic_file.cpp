#include "env/atomic_file.h"

#include <fstream>
#include <stdexcept>

namespace locksim {

void write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
  // A path that is a symlink or no regular file (/dev/stdout, a FIFO, a
  // device) is written in place: a rename would replace the link or the
  // device node itself with a regular file (as root, `--html /dev/full`
  // did), and a stream there is never half-read as a finished file anyway.
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + path.string());
    return;
  }
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();  // a full disk shows at the flush, not at the write
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace locksim
