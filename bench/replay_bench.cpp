// SPDX-License-Identifier: BSD-3-Clause
// Replay vs eager backward, per model, in one run. Each iteration times both on the same
// captured graph; the reported time is replay's, and the counters give eager's time, the
// ratio replay/eager, each side's peak tensor memory during one backward, validate_outputs
// nodes elided at load, and heap allocations per executed node of one replay (the runtime's
// own, target 0, and the ops').
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>

#include "alloc_counter.h"
#include "bench_models.h"
#include "ca/capture.h"
#include "ca/executor.h"
#include "memory_tracker.h"

namespace ca::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void clear_grads(const std::vector<at::Tensor>& leaves) {
  for (const at::Tensor& t : leaves) t.mutable_grad().reset();
}

void BM_ReplayVsEager(benchmark::State& state, const BenchModel& model) {
  install_memory_tracker();
  torch::manual_seed(0);
  at::Tensor loss = model.forward();
  CaptureResult cap = capture({loss});
  Executor executor(cap.graph);
  std::vector<at::Tensor> params;
  for (size_t k : executor.grad_targets()) params.push_back(cap.inputs[k]);
  std::vector<at::Tensor> replay_inputs;  // what a file replay would see: detached copies
  for (const at::Tensor& t : cap.inputs) replay_inputs.push_back(t.detach().clone());
  std::vector<at::Tensor> replay_params;
  for (size_t k : executor.grad_targets()) replay_params.push_back(replay_inputs[k]);

  auto eager_step = [&] {
    clear_grads(params);
    torch::autograd::backward({loss}, {}, /*retain_graph=*/true);
  };
  auto replay_step = [&] {
    clear_grads(replay_params);
    executor.run(replay_inputs);
  };
  eager_step();  // warm both up
  replay_step();

  double eager_total = 0, replay_total = 0;
  for (auto _ : state) {
    auto start = Clock::now();
    eager_step();
    eager_total += seconds(start);
    start = Clock::now();
    replay_step();
    const double t = seconds(start);
    replay_total += t;
    state.SetIterationTime(t);
  }
  clear_grads(params);
  reset_peak();
  eager_step();
  const double eager_peak = static_cast<double>(peak_bytes_since_reset());
  clear_grads(replay_params);
  reset_peak();
  replay_step();
  const double replay_peak = static_cast<double>(peak_bytes_since_reset());

  // Allocations of one steady-state replay, the runtime's own apart from the ops'.
  clear_grads(replay_params);
  AllocAttribution attribution;
  start_counting();
  executor.run(replay_inputs, &attribution);
  const AllocCounts allocs = stop_counting();
  const double steps = static_cast<double>(executor.stats().plan_steps);

  const double n = static_cast<double>(state.iterations());
  state.counters["nodes"] = static_cast<double>(cap.graph.nodes.size());
  state.counters["eager_us"] = 1e6 * eager_total / n;
  state.counters["replay_us"] = 1e6 * replay_total / n;
  state.counters["ratio"] = replay_total / eager_total;
  state.counters["eager_peak_MiB"] = eager_peak / (1 << 20);
  state.counters["replay_peak_MiB"] = replay_peak / (1 << 20);
  state.counters["elided"] = static_cast<double>(executor.stats().validates_elided);
  state.counters["rt_allocs_per_node"] = static_cast<double>(allocs.runtime) / steps;
  state.counters["op_allocs_per_node"] = static_cast<double>(allocs.op) / steps;
  state.counters["mem_ratio"] = eager_peak > 0 ? replay_peak / eager_peak : 0.0;
}

const bool kRegistered = (register_per_model("replay_vs_eager", BM_ReplayVsEager), true);

}  // namespace
}  // namespace ca::bench

BENCHMARK_MAIN();
