// SPDX-License-Identifier: BSD-3-Clause
// Round trips IR -> bytes -> IR for every arg kind and node kind, through buffers and files.
#include "ca/graph_io.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ca/error.h"
#include "ca/graph_dump.h"
#include "ca/graph_validate.h"
#include "ca/version.h"
#include "ca_graph_generated.h"
#include "checksum_seal.h"
#include "sample_graphs.h"
#include "test_util.h"

namespace ca {
namespace {

Graph round_trip(const Graph& g) {
  const std::vector<uint8_t> bytes = graph_to_bytes(g);
  return graph_from_bytes(bytes.data(), bytes.size());
}

TEST(GraphIo, SampleGraphIsValidAndRoundTrips) {
  const Graph g = test::sample_graph();
  ASSERT_NO_THROW(validate_graph(g));
  EXPECT_EQ(round_trip(g), g);
}

TEST(GraphIo, SampleGraphUsesEveryNodeKind) {
  std::vector<bool> seen(static_cast<size_t>(NodeKind::kAten) + 1);
  for (const Node& n : test::sample_graph().nodes) seen[static_cast<size_t>(n.kind)] = true;
  for (size_t k = 0; k < seen.size(); ++k) EXPECT_TRUE(seen[k]) << "node kind " << k;
}

TEST(GraphIo, EveryArgKindRoundTrips) {
  std::vector<bool> seen(static_cast<size_t>(Arg::Kind::kDict) + 1);
  for (const auto& [name, arg] : test::every_arg_kind()) {
    seen[static_cast<size_t>(arg.kind)] = true;
    Graph g = test::sample_graph();
    g.set_args(0, {arg});
    const Graph back = round_trip(g);
    ASSERT_EQ(back.nodes.size(), g.nodes.size()) << name;
    ASSERT_EQ(back.args(0).size(), 1U) << name;
    EXPECT_EQ(back.args(0)[0].tree(), arg) << name << ": " << format_arg(arg);
    EXPECT_EQ(back, g) << name;
  }
  for (size_t k = 0; k < seen.size(); ++k) EXPECT_TRUE(seen[k]) << "arg kind " << k;
}

TEST(GraphIo, EveryNodeKindRoundTripsFieldByField) {
  const Graph full = test::sample_graph();
  const Graph back = round_trip(full);
  ASSERT_EQ(back.nodes.size(), full.nodes.size());
  for (size_t n = 0; n < full.nodes.size(); ++n) {
    EXPECT_TRUE(back.node_equal(n, full, n)) << node_kind_name(full.nodes[n].kind);
  }
  EXPECT_EQ(back.inputs, full.inputs);
  EXPECT_EQ(back.outputs, full.outputs);
}

TEST(GraphIo, ExtremeInputValuesRoundTrip) {
  Graph g = test::sample_graph();
  g.inputs[3].int_value = std::numeric_limits<int64_t>::min();
  g.inputs[4].double_value = -0.0;
  g.inputs[0].meta.dtype = c10::kByte;  // 0: the FlatBuffers default, must still round-trip
  g.inputs[0].meta.sizes = {0, std::numeric_limits<int64_t>::max()};
  g.inputs[0].name.clear();
  const Graph back = round_trip(g);
  EXPECT_EQ(back, g);
  EXPECT_TRUE(std::signbit(back.inputs[4].double_value));
}

TEST(GraphIo, TinyGraphRoundTrips) {
  EXPECT_EQ(round_trip(test::tiny_graph()), test::tiny_graph());
}

// A graph built in memory with a node outside its tables is the caller's bug: the writer names
// the node instead of reading past the pools.
TEST(GraphIo, TheWriterRefusesANodeOutsideTheGraphsTables) {
  Graph ids = test::sample_graph();
  ids.nodes[2].outputs = IdRange{static_cast<uint32_t>(ids.value_ids.size()), 1};
  EXPECT_TRUE(test::contains(test::error_of<Error>([&] { graph_to_bytes(ids); }),
                             "nodes[2]: ids not a range of the graph's value ids"));
  Graph names = test::sample_graph();
  names.nodes[0].op = 999;
  EXPECT_TRUE(test::contains(test::error_of<Error>([&] { graph_to_bytes(names); }),
                             "nodes[0]: a name id not in the graph's name table"));
  Graph args = test::sample_graph();
  args.nodes[1].args = ArgRange{9999, 1, 1};
  EXPECT_TRUE(test::contains(test::error_of<Error>([&] { graph_to_bytes(args); }),
                             "nodes[1].args: not a range of the graph's arg pool"));
}

TEST(GraphIo, OutputIsDeterministicAndIdentified) {
  const std::vector<uint8_t> a = graph_to_bytes(test::sample_graph());
  const std::vector<uint8_t> b = graph_to_bytes(test::sample_graph());
  EXPECT_EQ(a, b);
  ASSERT_GE(a.size(), 8u);
  EXPECT_EQ(std::memcmp(a.data() + 4, "CAGR", 4), 0);
}

TEST(GraphIo, UnalignedBufferLoads) {
  const std::vector<uint8_t> bytes = graph_to_bytes(test::sample_graph());
  std::vector<uint8_t> shifted(bytes.size() + 1);
  std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
  EXPECT_EQ(graph_from_bytes(shifted.data() + 1, bytes.size()), test::sample_graph());
}

TEST(GraphIo, FileRoundTrip) {
  const std::string path = test::temp_path("sample.fb");
  save_graph(test::sample_graph(), path);
  EXPECT_EQ(load_graph(path), test::sample_graph());
  std::remove(path.c_str());
}

TEST(GraphIo, SaveToUnwritablePathNamesIt) {
  const std::string path = "/nonexistent-dir/x.fb";
  try {
    save_graph(test::tiny_graph(), path);
    FAIL() << "expected ca::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

// Every file records the ca-replay version that wrote it, whatever the graph in memory says; a
// file from before versions were recorded reads as an empty writer_version.
TEST(GraphIo, FilesRecordTheirWritersVersion) {
  Graph g = test::sample_graph();
  g.writer_version = "9.9.9";  // provenance of a graph read elsewhere: not what is written
  const Graph back = round_trip(g);
  EXPECT_EQ(back.writer_version, kVersion);
  EXPECT_EQ(back, g);  // provenance is not content

  flatbuffers::FlatBufferBuilder fbb;
  const auto root = fb::CreateGraph(fbb, kFormatVersion, fbb.CreateString(g.torch_version));
  fb::FinishGraphBuffer(fbb, root);
  const std::vector<uint8_t> old = test::sealed(fbb.GetBufferPointer(), fbb.GetSize());
  EXPECT_EQ(graph_from_bytes(old.data(), old.size()).writer_version, "");
}

}  // namespace
}  // namespace ca
