// SPDX-License-Identifier: BSD-3-Clause
// Load and prepare time: bytes -> ca::Graph (graph_from_bytes) and bytes -> ready ca::Executor,
// on a graph captured from a deep MLP (Linear + Tanh layers, about 1,000 nodes: functional ops,
// validate_outputs, accumulate and accumulate_grad nodes), and on a synthetic chain of trivial
// nodes. Target (issue 7): load + prepare of 1,000 nodes <= 20 ms.
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "ca/capture.h"
#include "ca/executor.h"
#include "ca/graph_io.h"
#include "graph_gen.h"

namespace ca::bench {
namespace {

/// Nodes the deep MLP's backward graph should have at least.
constexpr size_t kTargetNodes = 1000;

/// Bytes of a graph captured from an MLP deep enough for kTargetNodes nodes.
const std::vector<uint8_t>& deep_mlp_bytes() {
  static const std::vector<uint8_t> kBytes = [] {
    torch::manual_seed(0);
    torch::nn::Sequential mlp;
    Graph graph;
    while (graph.nodes.size() < kTargetNodes) {
      mlp->push_back(torch::nn::Linear(16, 16));
      mlp->push_back(torch::nn::Tanh());
      graph = capture({mlp->forward(torch::randn({4, 16})).pow(2).mean()}).graph;
    }
    return graph_to_bytes(graph);
  }();
  return kBytes;
}

void set_counters(benchmark::State& state, const std::vector<uint8_t>& bytes, size_t nodes) {
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["file_bytes"] = static_cast<double>(bytes.size());
  // Shown as time per node ("6.5us"): nodes per second, inverted.
  state.counters["per_node"] =
      benchmark::Counter(static_cast<double>(nodes), benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
}

void BM_LoadDeepMlp(benchmark::State& state) {
  const std::vector<uint8_t>& bytes = deep_mlp_bytes();
  size_t nodes = 0;
  for (auto _ : state) nodes = graph_from_bytes(bytes.data(), bytes.size()).nodes.size();
  set_counters(state, bytes, nodes);
}

void BM_LoadPrepareDeepMlp(benchmark::State& state) {
  const std::vector<uint8_t>& bytes = deep_mlp_bytes();
  Executor warm(graph_from_bytes(bytes.data(), bytes.size()));  // harvests the registry once
  size_t nodes = warm.graph().nodes.size();
  for (auto _ : state) {
    Executor executor(graph_from_bytes(bytes.data(), bytes.size()));
    benchmark::DoNotOptimize(executor);
  }
  set_counters(state, bytes, nodes);
}

void BM_LoadTrivialChain(benchmark::State& state) {
  const auto nodes = static_cast<size_t>(state.range(0));
  const std::vector<uint8_t> bytes = graph_to_bytes(trivial_chain(nodes, TrivialKind::kFunctional));
  for (auto _ : state) benchmark::DoNotOptimize(graph_from_bytes(bytes.data(), bytes.size()));
  set_counters(state, bytes, nodes);
}

BENCHMARK(BM_LoadDeepMlp)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LoadPrepareDeepMlp)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LoadTrivialChain)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ca::bench

BENCHMARK_MAIN();
