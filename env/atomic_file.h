// Writing an output file so that a reader never sees half of it: through a
// temporary file beside it and a rename. An interrupted run (Ctrl-C, a kill)
// leaves either the old file or the whole new one, never a truncated one that
// looks whole (result.json, a sweep's matrix, a kept history).
#pragma once

#include <filesystem>
#include <string_view>

namespace locksim {

// Writes `bytes` to PATH.tmp, then renames it to `path` (replacing it); a
// `path` that exists and is a symlink or no regular file (/dev/stdout, a
// FIFO) is written in place instead.
// Throws std::runtime_error naming the file when it cannot be written, and
// std::filesystem::filesystem_error when the rename fails.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

// True when `path` exists and is a symlink or no regular file (/dev/stdout, a
// FIFO, a device): write_file_atomically writes it in place.
bool written_in_place(const std::filesystem::path& path);

}  // namespace locksim
