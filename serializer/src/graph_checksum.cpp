// SPDX-License-Identifier: BSD-3-Clause
// Graph integrity trailer: "CAX1", 4 zero bytes, XXH3-64 of the payload (little-endian).
#include "graph_checksum.h"

#include <xxhash.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "ca/error.h"

namespace ca::detail {
namespace {

constexpr char kTrailerMagic[4] = {'C', 'A', 'X', '1'};
constexpr size_t kHashOffset = 8;  // magic, then reserved bytes, then the hash

uint64_t payload_hash(const uint8_t* data, size_t size) { return XXH3_64bits(data, size); }

std::string hex(uint64_t v) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(v));
  return text;
}

// Explicit byte order: the file is the same on every host.
uint64_t read_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

void append_checksum(std::vector<uint8_t>& bytes) {
  const uint64_t hash = payload_hash(bytes.data(), bytes.size());
  bytes.reserve(bytes.size() + kChecksumTrailerBytes);  // exactly: graphs can be large
  bytes.insert(bytes.end(), kTrailerMagic, kTrailerMagic + sizeof kTrailerMagic);
  bytes.insert(bytes.end(), kHashOffset - sizeof kTrailerMagic, uint8_t{0});
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<uint8_t>(hash >> (8 * i)));
}

bool has_checksum_trailer(const uint8_t* data, size_t size) {
  return size >= kChecksumTrailerBytes &&
         std::memcmp(data + size - kChecksumTrailerBytes, kTrailerMagic, sizeof kTrailerMagic) == 0;
}

size_t checked_payload_size(const uint8_t* data, size_t size) {
  if (size < kChecksumTrailerBytes) {
    throw FormatError(std::to_string(size) + " bytes, too small for a ca-replay graph and its " +
                      std::to_string(kChecksumTrailerBytes) + "-byte checksum trailer");
  }
  const size_t payload = size - kChecksumTrailerBytes;
  const uint8_t* trailer = data + payload;
  if (std::memcmp(trailer, kTrailerMagic, sizeof kTrailerMagic) != 0) {
    throw FormatError(
        "no checksum trailer (the last 16 bytes do not start with \"CAX1\"): the file is "
        "truncated or corrupt, or was written before graphs carried a checksum");
  }
  for (size_t i = sizeof kTrailerMagic; i < kHashOffset; ++i) {
    if (trailer[i] != 0) {
      throw FormatError("checksum trailer: reserved byte " + std::to_string(i) + " is " +
                        std::to_string(trailer[i]) + ", expected 0: the file is corrupt");
    }
  }
  const uint64_t expected = read_le64(trailer + kHashOffset);
  const uint64_t computed = payload_hash(data, payload);
  if (expected != computed) {
    throw FormatError("checksum mismatch: the file is corrupt (expected " + hex(expected) +
                      ", computed " + hex(computed) + ")");
  }
  return payload;
}

}  // namespace ca::detail
