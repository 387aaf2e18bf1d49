// SPDX-License-Identifier: BSD-3-Clause
// Replay-vs-eager parity over the case table, in memory and through bytes and files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "ca/graph_io.h"
#include "ca/tensor_io.h"
#include "parity/parity_cases.h"

namespace ca::testing {
namespace {

std::vector<ParityCase> all_cases() {
  std::vector<ParityCase> all;
  for (auto group : {basic_cases, nn_cases, graph_cases, model_cases, checked_op_cases}) {
    for (ParityCase& c : group()) all.push_back(std::move(c));
  }
  return all;
}

class Parity : public ::testing::TestWithParam<ParityCase> {};

// Graph to bytes and back; inputs stay in memory.
Replayable through_bytes(Replayable r) {
  const std::vector<uint8_t> bytes = graph_to_bytes(r.graph);
  return {graph_from_bytes(bytes.data(), bytes.size()), std::move(r.inputs)};
}

// Graph and inputs written to disk and read back, as `replay --graph --inputs` does.
Replayable through_files(const Replayable& r) {
  std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::replace(name.begin(), name.end(), '/', '_');
  const std::string stem = ::testing::TempDir() + "/parity_" + name;
  save_graph(r.graph, stem + ".fb");
  save_tensors(r.inputs, stem + ".pt");
  Replayable out{load_graph(stem + ".fb"), load_tensors(stem + ".pt")};
  std::remove((stem + ".fb").c_str());
  std::remove((stem + ".pt").c_str());
  return out;
}

TEST_P(Parity, ThroughBytesMatchesEager) { check_parity(GetParam(), through_bytes); }

TEST_P(Parity, ThroughFilesMatchesEager) { check_parity(GetParam(), through_files); }

INSTANTIATE_TEST_SUITE_P(Cases, Parity, ::testing::ValuesIn(all_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(ParityTable, HasAtLeast30Cases) { EXPECT_GE(all_cases().size(), 30u); }

}  // namespace
}  // namespace ca::testing
