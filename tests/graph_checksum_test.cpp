// SPDX-License-Identifier: BSD-3-Clause
// The graph file's integrity trailer: written by graph_to_bytes, checked by graph_from_bytes
// before anything else, so that any single corrupted byte is refused at load.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ca/error.h"
#include "ca/graph_io.h"
#include "checksum_seal.h"
#include "sample_graphs.h"
#include "test_util.h"

namespace ca {
namespace {

std::string load_error(const std::vector<uint8_t>& bytes) {
  return test::error_of<FormatError>([&] { graph_from_bytes(bytes.data(), bytes.size()); },
                                     "loading corrupted bytes");
}

std::string hex(uint64_t v) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(v));
  return text;
}

TEST(GraphChecksum, TrailerHoldsMagicAndHashOfEverythingBefore) {
  const std::vector<uint8_t> bytes = graph_to_bytes(test::sample_graph());
  ASSERT_GT(bytes.size(), test::kTrailerBytes);
  const size_t payload = bytes.size() - test::kTrailerBytes;
  EXPECT_EQ(bytes, test::sealed(bytes.data(), payload));
  EXPECT_EQ(std::memcmp(bytes.data() + payload, "CAX1\0\0\0\0", 8), 0);
}

TEST(GraphChecksum, EveryByteFlippedInTinyGraphIsRefused) {
  const std::vector<uint8_t> valid = graph_to_bytes(test::tiny_graph());
  const size_t payload = valid.size() - test::kTrailerBytes;
  for (size_t i = 0; i < valid.size(); ++i) {
    for (uint8_t mask : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
      std::vector<uint8_t> bytes = valid;
      bytes[i] ^= mask;
      const std::string msg = load_error(bytes);
      // Bytes 4..7 are the file identifier, checked first to name foreign files.
      const bool identifier = i >= 4 && i < 8;
      const bool magic = i >= payload && i < payload + 4;
      const bool reserved = i >= payload + 4 && i < payload + 8;
      const char* want = identifier ? "identifier"
                         : magic    ? "no checksum trailer"
                         : reserved ? "reserved byte"
                                    : "checksum mismatch: the file is corrupt";
      EXPECT_TRUE(test::contains(msg, want)) << "byte " << i << " mask " << int(mask);
    }
  }
}

TEST(GraphChecksum, MismatchNamesExpectedAndComputedHashes) {
  std::vector<uint8_t> bytes = graph_to_bytes(test::sample_graph());
  const size_t payload = bytes.size() - test::kTrailerBytes;
  const uint64_t expected = test::trailer_hash(bytes.data(), payload);
  bytes[payload / 2] ^= 0x10;
  const uint64_t computed = test::trailer_hash(bytes.data(), payload);
  EXPECT_EQ(load_error(bytes), "checksum mismatch: the file is corrupt (expected " + hex(expected) +
                                   ", computed " + hex(computed) + ")");
}

TEST(GraphChecksum, IsCheckedBeforeTheVerifier) {
  std::vector<uint8_t> bytes = graph_to_bytes(test::sample_graph());
  bytes[3] = 0x7f;  // the root offset, now far past the end: the verifier would refuse it
  EXPECT_TRUE(test::contains(load_error(bytes), "checksum mismatch"));
  EXPECT_TRUE(test::contains(load_error(test::resealed(bytes)), "FlatBuffers verification"));
}

TEST(GraphChecksum, BareFlatBufferIsRefused) {
  const std::vector<uint8_t> bytes = graph_to_bytes(test::sample_graph());
  const std::vector<uint8_t> bare(bytes.begin(), bytes.end() - test::kTrailerBytes);
  EXPECT_TRUE(test::contains(load_error(bare), "no checksum trailer"));
  EXPECT_EQ(graph_from_bytes(bytes.data(), bytes.size()), test::sample_graph());
}

TEST(GraphChecksum, TruncatedOrExtendedFilesAreRefused) {
  const std::vector<uint8_t> bytes = graph_to_bytes(test::sample_graph());
  for (size_t cut : {size_t{1}, size_t{8}, size_t{15}, size_t{16}, size_t{17}}) {
    const std::vector<uint8_t> shorter(bytes.begin(), bytes.end() - static_cast<long>(cut));
    EXPECT_THROW(graph_from_bytes(shorter.data(), shorter.size()), FormatError) << cut;
  }
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  EXPECT_TRUE(test::contains(load_error(longer), "no checksum trailer"));
}

TEST(GraphChecksum, TooSmallForTrailerIsRefused) {
  const std::vector<uint8_t> bytes = graph_to_bytes(test::tiny_graph());
  const std::vector<uint8_t> head(bytes.begin(), bytes.begin() + 12);  // keeps "CAGR"
  EXPECT_TRUE(test::contains(load_error(head), "too small"));
}

}  // namespace
}  // namespace ca
