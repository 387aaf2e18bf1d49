// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// An independent implementation of the graph file's integrity trailer, for tests that build or
// mutate raw graph bytes on purpose and still want them to reach the verifier or the decoder.

#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ca::test {

/// Bytes of the trailer: "CAX1", 4 zero bytes, XXH3-64 of everything before it (little-endian).
inline constexpr size_t kTrailerBytes = 16;

/// XXH3-64 of `size` bytes at `data`, as the trailer must hold it.
inline uint64_t trailer_hash(const uint8_t* data, size_t size) { return XXH3_64bits(data, size); }

/// `size` bytes at `data` (a bare FlatBuffer) followed by a correct trailer.
inline std::vector<uint8_t> sealed(const uint8_t* data, size_t size) {
  std::vector<uint8_t> out(data, data + size);
  const uint64_t hash = trailer_hash(data, size);
  for (char c : {'C', 'A', 'X', '1'}) out.push_back(static_cast<uint8_t>(c));
  out.insert(out.end(), 4, uint8_t{0});
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(hash >> (8 * i)));
  return out;
}

/// Replaces the trailer of a graph buffer whose payload was mutated on purpose.
inline std::vector<uint8_t> resealed(const std::vector<uint8_t>& graph_bytes) {
  return sealed(graph_bytes.data(), graph_bytes.size() - kTrailerBytes);
}

}  // namespace ca::test
