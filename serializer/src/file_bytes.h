// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Whole-file reads and writes shared by the graph and tensor loaders.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ca::detail {

/// Reads the whole regular file at `path`. Throws Error naming the path when it is missing,
/// not a regular file, unreadable, or larger than `max_bytes` (checked before reading).
std::vector<uint8_t> read_file_bytes(const std::string& path, size_t max_bytes);

/// Writes `size` bytes to `path` atomically: into a new, uniquely named temporary file in the
/// same folder (created with O_EXCL|O_NOFOLLOW, so an existing file or symlink is never reused or
/// followed), fsynced, renamed over `path`, then the folder fsynced. On any failure the temporary
/// file is removed and `path` is untouched. Throws Error naming the path and the reason.
void write_file_bytes(const std::string& path, const uint8_t* data, size_t size);

}  // namespace ca::detail
