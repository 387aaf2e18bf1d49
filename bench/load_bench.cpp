// Load + prepare of a generated ~1,000-node graph from bytes: decode, validate, bind ops,
// infer metadata on meta tensors, plan. Target: <= 20 ms.
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include "ca/capture.h"
#include "ca/executor.h"
#include "ca/graph_io.h"

namespace ca::bench {
namespace {

// A deep MLP of distinct widths every few layers: about 1,000 nodes.
std::vector<uint8_t> thousand_node_graph() {
  torch::manual_seed(0);
  torch::nn::Sequential mlp;
  for (int i = 0; i < 124; ++i) {
    mlp->push_back(torch::nn::Linear(32, 32));
    mlp->push_back(torch::nn::Tanh());
  }
  at::Tensor loss = mlp->forward(torch::randn({8, 32})).pow(2).mean();
  return graph_to_bytes(capture({loss}).graph);
}

void BM_LoadAndPrepare(benchmark::State& state) {
  const std::vector<uint8_t> bytes = thousand_node_graph();
  ExecutorStats stats;
  double executor_ms = 0;
  for (auto _ : state) {
    Executor ex(graph_from_bytes(bytes.data(), bytes.size()));
    stats = ex.stats();
    executor_ms += stats.load_ms;
    benchmark::DoNotOptimize(ex);
  }
  state.counters["executor_ms"] = executor_ms / static_cast<double>(state.iterations());
  state.counters["nodes"] = static_cast<double>(stats.nodes);
  state.counters["bytes"] = static_cast<double>(bytes.size());
  state.counters["elided"] = static_cast<double>(stats.validates_elided);
  state.counters["meta_calls"] = static_cast<double>(stats.meta_calls);
  state.counters["memo_hits"] = static_cast<double>(stats.meta_memo_hits);
}
BENCHMARK(BM_LoadAndPrepare)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ca::bench
