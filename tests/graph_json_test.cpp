// SPDX-License-Identifier: BSD-3-Clause
// graph_from_json: the JSON that FlatBuffers' own flatc makes of our binary graphs reads back as
// the same graph (an independent writer of the form), and bad JSON is refused with its place.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "ca/error.h"
#include "ca/graph_io.h"
#include "graph_checksum.h"
#include "sample_graphs.h"

namespace ca {
namespace {

// flatc --json of `g`'s FlatBuffer, every field written (so -0.0 keeps its sign).
std::string flatc_json(const Graph& g) {
  std::vector<uint8_t> bytes = graph_to_bytes(g);
  bytes.resize(bytes.size() - detail::kChecksumTrailerBytes);
  // Named by test and process: ctest runs the cases of this file in parallel.
  const std::string dir = ::testing::TempDir();
  const std::string stem = std::string("graph_json_") +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                           std::to_string(::getpid());
  const std::string bin = dir + "/" + stem + ".fb";
  std::ofstream(bin, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  const std::string cmd = std::string(CA_FLATC) + " --json --strict-json --defaults-json " +
                          "--raw-binary -o " + dir + " " + CA_SCHEMA + " -- " + bin;
  if (std::system(cmd.c_str()) != 0) ADD_FAILURE() << cmd;
  std::ifstream in(dir + "/" + stem + ".json");
  std::stringstream text;
  text << in.rdbuf();
  std::remove(bin.c_str());
  std::remove((dir + "/" + stem + ".json").c_str());
  return text.str();
}

TEST(GraphJson, FlatcsJsonOfEveryArgKindReadsBackAsTheSameGraph) {
  for (const auto& [name, arg] : test::every_arg_kind()) {
    Graph g = test::sample_graph();
    g.set_args(0, {arg});
    g.inputs[4].double_value = -0.0;
    g.inputs[0].name = "caf\xc3\xa9 \"quoted\"\n";
    const Graph back = graph_from_json(flatc_json(g));
    if (arg.kind == Arg::Kind::kDouble && std::isnan(arg.d)) {
      EXPECT_TRUE(std::isnan(back.args(0)[0].d())) << name;  // JSON keeps no NaN payload
      continue;
    }
    // flatc prints doubles in fixed notation with 12 decimals: a denormal reads back as 0
    // (ca_export writes Python's exact repr; ExponentNotationDoublesAreExact covers those).
    if (name == "double_denormal") continue;
    EXPECT_EQ(back, g) << name;
    EXPECT_TRUE(std::signbit(back.inputs[4].double_value));
  }
}

TEST(GraphJson, ExponentNotationDoublesAreExact) {
  Graph g = test::sample_graph();
  std::string json = flatc_json(g);
  const std::string field = "\"double_value\": ";
  const size_t at = json.find(field);  // inputs[0]'s; replace its value
  ASSERT_NE(at, std::string::npos);
  const size_t end = json.find_first_of(",\n}", at + field.size());
  for (const double v : {std::numeric_limits<double>::denorm_min(), 1e-300, -0.0, 0.1,
                         std::numeric_limits<double>::max()}) {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", v);
    std::string edited = json;
    edited.replace(at + field.size(), end - at - field.size(), text);
    const double back = graph_from_json(edited).inputs[0].double_value;
    uint64_t got = 0, want = 0;  // bit for bit: the text must round-trip every double exactly
    std::memcpy(&got, &back, sizeof back);
    std::memcpy(&want, &v, sizeof v);
    EXPECT_EQ(got, want) << text;
  }
}

void expect_refused(const std::string& json, const std::string& words) {
  try {
    graph_from_json(json);
    ADD_FAILURE() << "accepted: " << json;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(GraphJson, BadJsonIsRefusedNamingWhere) {
  expect_refused("{\"format_version\": 2,", "graph JSON: ");
  expect_refused("{\"format_version\": 2, \"nodes\": [{\"kind\": \"Sideways\"}]}", "Sideways");
  expect_refused("{\"format_version\": 2, \"colour\": 1}", "colour");
  expect_refused("{\"format_version\": 99}", "format version");
  expect_refused(std::string("{\"format_version\": 2}\0", 22), "NUL");
  LoadOptions small;
  small.max_graph_bytes = 8;
  try {
    graph_from_json("{\"format_version\": 2}", small);
    ADD_FAILURE();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("more than the limit"), std::string::npos);
  }
}

}  // namespace
}  // namespace ca
