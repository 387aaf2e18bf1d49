// SPDX-License-Identifier: BSD-3-Clause
// Hostile input: truncation, corruption, wrong file types, structural errors and the format
// gate must all end in a ca::Error with a clear message, never a crash, hang or huge allocation.
// The format layer decodes and validate_graph checks structure, as the executor's load runs
// them; op binding and torch compatibility are tested with the executor (op_binding_test).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "ca/error.h"
#include "ca/graph_dump.h"
#include "ca/graph_io.h"
#include "ca/graph_validate.h"
#include "ca/tensor_io.h"
#include "ca/version.h"
#include "ca_graph_generated.h"
#include "checksum_seal.h"
#include "sample_graphs.h"
#include "test_util.h"

namespace ca {
namespace {

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// Decodes `g` through bytes and validates it, and returns the error message; fails the test if
/// both succeed.
template <typename E = FormatError>
std::string load_error(const Graph& g, const LoadOptions& options = {}) {
  const std::vector<uint8_t> bytes = graph_to_bytes(g);
  return test::error_of<E>(
      [&] { validate_graph(graph_from_bytes(bytes.data(), bytes.size(), options)); },
      "loading the graph");
}

template <typename E = FormatError>
std::string file_error(const std::string& path) {
  return test::error_of<E>([&] { validate_graph(load_graph(path)); }, "loading " + path);
}

TEST(GraphBadInput, EmptyBuffer) {
  try {
    graph_from_bytes(nullptr, 0);
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_TRUE(test::contains(e.what(), "empty"));
  }
}

TEST(GraphBadInput, EmptyFileNamesPath) {
  const std::string path = test::temp_path("empty.fb");
  write_file(path, "");
  const std::string msg = file_error(path);
  EXPECT_TRUE(test::contains(msg, path));
  EXPECT_TRUE(test::contains(msg, "empty"));
  std::remove(path.c_str());
}

TEST(GraphBadInput, MissingFileNamesPath) {
  const std::string path = test::temp_path("missing.fb");
  EXPECT_TRUE(test::contains(file_error<Error>(path), path + ": no such file"));
}

TEST(GraphBadInput, DirectoryIsRefused) {
  EXPECT_TRUE(test::contains(file_error<Error>(::testing::TempDir()), "not a regular file"));
}

TEST(GraphBadInput, PtZipFileIsRefused) {
  const std::string path = test::temp_path("tensors.pt");
  save_tensors({}, path);
  const std::string msg = file_error(path);
  EXPECT_TRUE(test::contains(msg, path));
  EXPECT_TRUE(test::contains(msg, "zip archive"));
  std::remove(path.c_str());
}

TEST(GraphBadInput, TextFileIsRefused) {
  const std::string path = test::temp_path("notes.txt");
  write_file(path, "graph(): this is not a flatbuffer\n");
  EXPECT_TRUE(test::contains(file_error(path), "text \"graph(): this is"));
  std::remove(path.c_str());
}

TEST(GraphBadInput, TinyBuffersAreRefused) {
  const std::vector<uint8_t> bytes = {'C', 'A', 'G'};
  try {
    graph_from_bytes(bytes.data(), bytes.size());
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_TRUE(test::contains(e.what(), "too small"));
  }
}

TEST(GraphBadInput, TruncatedAtEverySixteenth) {
  const std::vector<uint8_t> bytes = graph_to_bytes(test::sample_graph());
  const size_t payload = bytes.size() - test::kTrailerBytes;
  for (size_t k = 0; k < 16; ++k) {
    const size_t size = bytes.size() * k / 16;
    const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(size));
    EXPECT_THROW(graph_from_bytes(cut.data(), cut.size()), FormatError) << size << " bytes";
    // The same cut of the FlatBuffer with a valid checksum: the verifier must refuse it.
    const std::vector<uint8_t> sealed = test::sealed(bytes.data(), payload * k / 16);
    EXPECT_THROW(graph_from_bytes(sealed.data(), sealed.size()), FormatError) << "sealed " << k;
  }
}

/// Loads corrupted bytes: either a valid graph or a ca::Error; anything else fails the test.
bool loads(const std::vector<uint8_t>& bytes) {
  try {
    const Graph g = graph_from_bytes(bytes.data(), bytes.size());
    validate_graph(g);
    EXPECT_FALSE(dump_graph(g).empty());
    return true;
  } catch (const Error&) {
    return false;
  }
}

// Corruptions resealed with a valid checksum (as a forger would), so that they reach the
// verifier and the decoder: those must still never crash. graph_checksum_test covers refusal.
TEST(GraphBadInput, ThousandRandomByteCorruptionsPastTheChecksum) {
  const std::vector<uint8_t> valid = graph_to_bytes(test::sample_graph());
  std::mt19937 rng(20261202);
  std::uniform_int_distribution<size_t> pos(0, valid.size() - test::kTrailerBytes - 1);
  std::uniform_int_distribution<int> delta(1, 255);
  int loaded = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    std::vector<uint8_t> bytes = valid;
    bytes[pos(rng)] ^= static_cast<uint8_t>(delta(rng));
    loaded += loads(test::resealed(bytes));
  }
  std::printf("1000 corruptions: %d loaded as valid graphs, %d refused\n", loaded, 1000 - loaded);
  EXPECT_LT(loaded, 1000);
}

TEST(GraphBadInput, EveryByteFlippedInTinyGraphPastTheChecksum) {
  const std::vector<uint8_t> valid = graph_to_bytes(test::tiny_graph());
  for (size_t i = 0; i + test::kTrailerBytes < valid.size(); ++i) {
    std::vector<uint8_t> bytes = valid;
    bytes[i] ^= 0xff;
    loads(test::resealed(bytes));
  }
}

TEST(GraphBadInput, OutOfRangeValueId) {
  Graph g = test::sample_graph();
  g.id(g.nodes[3].inputs, 0) = 93;
  EXPECT_EQ(load_error(g), "nodes[3].inputs[0]: value id 93 out of range [0, 15)");
}

TEST(GraphBadInput, UseBeforeDefine) {
  Graph g = test::sample_graph();
  g.id(g.nodes[2].inputs, 0) = 11;  // defined by node 3
  EXPECT_EQ(load_error(g),
            "nodes[2].inputs[0]: value id 11 used before its definition by nodes[3]");
}

TEST(GraphBadInput, BadEnumIsNamed) {
  Graph g = test::sample_graph();
  test::edit_args(g, 0, [](std::vector<Arg>& a) { a[0].kind = static_cast<Arg::Kind>(99); });
  EXPECT_EQ(load_error(g), "nodes[0].args[0].kind: 99 out of range [0, 15)");
  g = test::sample_graph();
  g.inputs[0].meta.dtype = static_cast<c10::ScalarType>(120);
  EXPECT_TRUE(test::contains(load_error(g), "inputs[0].meta.dtype: 120 out of range"));
  g = test::sample_graph();  // the recorded op schemas are decoded with the same checks
  g.op_schemas[0].args[1].kind = static_cast<ArgType::Kind>(77);
  EXPECT_TRUE(test::contains(load_error(g), "op_schemas[0].args[1].kind: 77 out of range"))
      << load_error(g);
}

TEST(GraphBadInput, FutureFormatVersion) {
  Graph g = test::sample_graph();
  g.format_version = kFormatVersion + 1;
  const std::string msg = load_error<VersionError>(g);
  EXPECT_TRUE(test::contains(msg, "format version " + std::to_string(kFormatVersion + 1)));
  EXPECT_TRUE(test::contains(msg, "reads format version " + std::to_string(kFormatVersion)));
}

TEST(GraphBadInput, FutureFormatThatDoesNotParseSaysVersion) {
  Graph g = test::sample_graph();
  g.format_version = 7;
  g.id(g.nodes[3].inputs, 0) = 93;
  EXPECT_TRUE(test::contains(load_error<VersionError>(g), "format version 7"));
}

TEST(GraphBadInput, FormatOneSaysToCaptureAgain) {
  Graph g = test::sample_graph();
  g.format_version = 1;
  EXPECT_TRUE(test::contains(load_error<VersionError>(g), "capture the graph again"));
  // As format 1 wrote it: no checksum trailer. Named by its version, not called corrupt.
  std::vector<uint8_t> bytes = graph_to_bytes(g);
  bytes.resize(bytes.size() - 16);
  const std::string msg = test::error_of<VersionError>(
      [&] { graph_from_bytes(bytes.data(), bytes.size()); }, "loading a format 1 file");
  EXPECT_TRUE(test::contains(msg, "graph file format version 1")) << msg;
}

TEST(GraphBadInput, MaxGraphBytesIsConfigurable) {
  const std::vector<uint8_t> bytes = graph_to_bytes(test::sample_graph());
  LoadOptions small;
  small.max_graph_bytes = bytes.size() - 1;
  const std::string msg = test::error_of<FormatError>(
      [&] { graph_from_bytes(bytes.data(), bytes.size(), small); }, "loading past the limit");
  EXPECT_TRUE(test::contains(msg, "more than the limit of " + std::to_string(bytes.size() - 1)));
  small.max_graph_bytes = bytes.size();
  EXPECT_EQ(graph_from_bytes(bytes.data(), bytes.size(), small), test::sample_graph());
}

TEST(GraphBadInput, VersionErrorFromFileNamesPath) {
  Graph g = test::sample_graph();
  g.format_version = kFormatVersion + 1;
  const std::string path = test::temp_path("future.fb");
  save_graph(g, path);
  const std::string msg = file_error<VersionError>(path);
  EXPECT_TRUE(test::contains(msg, path + ": graph file format version ")) << msg;
  std::remove(path.c_str());
}

TEST(GraphBadInput, DeepNestingIsRefused) {
  for (int depth : {40, 100}) {  // past validate_graph's limit; past the verifier's
    Arg a = Arg::integer(1);
    for (int i = 0; i < depth; ++i) a = Arg::tuple({a});
    Graph g = test::sample_graph();
    g.set_args(0, {a});
    EXPECT_TRUE(test::contains(load_error(g), "deeper than")) << depth;
  }
}

/// The IR cannot hold items on an arg that is not a container; a file that has some is refused
/// by the reader, by path.
TEST(GraphBadInput, ItemsOnAScalarAreRefused) {
  flatbuffers::FlatBufferBuilder fbb;
  const auto item = fb::CreateArg(fbb, fb::ArgKind::None);
  const auto arg = fb::CreateArg(fbb, fb::ArgKind::Int, false, 7, 0.0, nullptr, 0, -1, -1, 0, 0,
                                 fbb.CreateVector(std::vector<flatbuffers::Offset<fb::Arg>>{item}));
  using ArgOffsets = std::vector<flatbuffers::Offset<fb::Arg>>;
  using NodeOffsets = std::vector<flatbuffers::Offset<fb::Node>>;
  const auto node = fb::CreateNode(fbb, fb::NodeKind::Functional, fbb.CreateString("NegBackward0"),
                                   0, 0, fbb.CreateVector(ArgOffsets{arg}));
  const auto root = fb::CreateGraph(fbb, kFormatVersion, fbb.CreateString(runtime_torch_version()),
                                    0, 0, fbb.CreateVector(NodeOffsets{node}));
  fb::FinishGraphBuffer(fbb, root);
  const std::vector<uint8_t> bytes = test::sealed(fbb.GetBufferPointer(), fbb.GetSize());
  EXPECT_EQ(test::error_of<FormatError>([&] { graph_from_bytes(bytes.data(), bytes.size()); }),
            "nodes[0].args[0].items: 1 items on an arg that is not a list, tuple or dict");
}

/// A buffer whose nodes all share one long op string: valid to the verifier, but it would
/// expand to nodes x string bytes in memory.
TEST(GraphBadInput, SharedOffsetsCannotExpand) {
  flatbuffers::FlatBufferBuilder fbb;
  const auto op = fbb.CreateString(std::string(size_t{64} * 1024, 'x'));
  std::vector<flatbuffers::Offset<fb::Node>> nodes;
  nodes.reserve(4096);
  for (int i = 0; i < 4096; ++i) nodes.push_back(fb::CreateNode(fbb, fb::NodeKind::Functional, op));
  const auto root = fb::CreateGraph(fbb, kFormatVersion, fbb.CreateString(runtime_torch_version()),
                                    0, 0, fbb.CreateVector(nodes));
  fb::FinishGraphBuffer(fbb, root);
  const std::vector<uint8_t> bytes = test::sealed(fbb.GetBufferPointer(), fbb.GetSize());
  try {
    graph_from_bytes(bytes.data(), bytes.size());
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_TRUE(test::contains(e.what(), "expands past its own size"));
  }
}

}  // namespace
}  // namespace ca
