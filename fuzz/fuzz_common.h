#pragma once
// Shared by the fuzz targets: what a target may throw, and the graph seal.
//
// A graph file carries an XXH3 checksum that random mutations almost never keep valid, so the
// graph targets take the bare FlatBuffer and seal it themselves, as a forger would: every input
// reaches the verifier, the decoder and the executor's checks, which are what is under test.

#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ca/error.h"

namespace ca::fuzz {

/// `size` bytes at `data` followed by the graph file's trailer ("CAX1", 4 zero bytes, XXH3-64).
inline std::vector<uint8_t> sealed(const uint8_t* data, size_t size) {
  std::vector<uint8_t> out(data, data + size);
  const uint64_t hash = XXH3_64bits(data, size);
  for (char c : {'C', 'A', 'X', '1'}) out.push_back(static_cast<uint8_t>(c));
  out.insert(out.end(), 4, uint8_t{0});
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(hash >> (8 * i)));
  return out;
}

/// Graph inputs larger than this are not materialized by the replay target (not a finding).
inline constexpr int64_t kMaxInputElements = int64_t{1} << 16;

}  // namespace ca::fuzz
