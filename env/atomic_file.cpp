#include "env/atomic_file.h"

#include <fstream>
#include <stdexcept>

namespace locksim {

void write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace locksim
