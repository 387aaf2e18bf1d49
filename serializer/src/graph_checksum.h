// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The integrity trailer every graph buffer ends with, so that corruption is refused before any
// byte of the FlatBuffer is interpreted.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ca::detail {

/// Size of the trailer: "CAX1", 4 reserved bytes (zero), then the XXH3-64 hash (little-endian)
/// of every byte before the trailer. It detects corruption; it does not authenticate anything:
/// whoever can edit the file can recompute it.
inline constexpr size_t kChecksumTrailerBytes = 16;

/// Appends the trailer over all of `bytes` (a finished FlatBuffer).
void append_checksum(std::vector<uint8_t>& bytes);

/// Whether the buffer ends with a trailer's magic (whatever its hash).
bool has_checksum_trailer(const uint8_t* data, size_t size);

/// Checks the trailer at the end of the `size` bytes at `data` and returns the size of the
/// FlatBuffer before it. Throws FormatError when the buffer is too small for a trailer, the
/// trailer's magic or reserved bytes are wrong, or the hash does not match.
size_t checked_payload_size(const uint8_t* data, size_t size);

}  // namespace ca::detail
