// SPDX-License-Identifier: BSD-3-Clause
// Replay vs eager backward, per model, in one run. Each iteration times both on the same
// captured graph; the reported time is replay's, and the counters give eager's time, the
// ratio replay/eager, each side's peak tensor memory during one backward, validate_outputs
// nodes elided at load, and heap allocations per executed node of one replay (the runtime's
// own, target 0, and the ops').
#include <benchmark/benchmark.h>
#include <valgrind/callgrind.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "alloc_attribution.h"
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

// One model's backward, eager and replayed, on the same captured graph.
struct ReplayPair {
  at::Tensor loss;
  CaptureResult cap;
  Executor executor;
  std::vector<at::Tensor> params;         // eager's leaves
  std::vector<at::Tensor> replay_inputs;  // what a file replay would see: detached copies
  std::vector<at::Tensor> replay_params;

  explicit ReplayPair(const BenchModel& model)
      : loss((torch::manual_seed(0), model.forward())), cap(capture({loss})), executor(cap.graph) {
    for (size_t k : executor.grad_targets()) params.push_back(cap.inputs[k]);
    for (const at::Tensor& t : cap.inputs) replay_inputs.push_back(t.detach().clone());
    for (size_t k : executor.grad_targets()) replay_params.push_back(replay_inputs[k]);
  }
  void eager_step() const {
    clear_grads(params);
    torch::autograd::backward({loss}, {}, /*retain_graph=*/true);
  }
  void replay_step() const {
    clear_grads(replay_params);
    executor.run(replay_inputs);
  }
};

void BM_ReplayVsEager(benchmark::State& state, const BenchModel& model) {
  install_memory_tracker();
  const ReplayPair pair(model);
  pair.eager_step();  // warm both up
  pair.replay_step();

  double eager_total = 0, replay_total = 0;
  for (auto _ : state) {
    auto start = Clock::now();
    pair.eager_step();
    eager_total += seconds(start);
    start = Clock::now();
    pair.replay_step();
    const double t = seconds(start);
    replay_total += t;
    state.SetIterationTime(t);
  }
  clear_grads(pair.params);
  reset_peak();
  pair.eager_step();
  const double eager_peak = static_cast<double>(peak_bytes_since_reset());
  clear_grads(pair.replay_params);
  reset_peak();
  pair.replay_step();
  const double replay_peak = static_cast<double>(peak_bytes_since_reset());

  // Allocations of one steady-state replay, the runtime's own apart from the ops'.
  clear_grads(pair.replay_params);
  AllocAttribution attribution;
  start_counting();
  pair.executor.run(pair.replay_inputs, &attribution);
  const HeapCounts allocs = stop_counting();
  const double steps = static_cast<double>(pair.executor.stats().plan_steps);

  const double n = static_cast<double>(state.iterations());
  state.counters["nodes"] = static_cast<double>(pair.cap.graph.nodes.size());
  state.counters["eager_us"] = 1e6 * eager_total / n;
  state.counters["replay_us"] = 1e6 * replay_total / n;
  state.counters["ratio"] = replay_total / eager_total;
  state.counters["eager_peak_MiB"] = eager_peak / (1 << 20);
  state.counters["replay_peak_MiB"] = replay_peak / (1 << 20);
  state.counters["elided"] = static_cast<double>(pair.executor.stats().validates_elided);
  state.counters["rt_allocs_per_node"] = static_cast<double>(allocs.runtime) / steps;
  state.counters["op_allocs_per_node"] = static_cast<double>(allocs.op) / steps;
  state.counters["mem_ratio"] = eager_peak > 0 ? replay_peak / eager_peak : 0.0;
}

const bool kRegistered = (register_per_model("replay_vs_eager", BM_ReplayVsEager), true);

}  // namespace

// `--count-instructions MODEL [REPS]`, under callgrind (scripts/count_instructions.sh): after a
// warm-up, REPS eager backwards, then REPS replays of the same graph, each in its own dump, so
// that instruction counts (repeatable, unlike time on a shared machine) compare the two.
int count_instructions(const std::string& name, int reps) {
  if (!RUNNING_ON_VALGRIND) {
    std::fprintf(stderr,
                 "--count-instructions: run under callgrind (scripts/count_instructions.sh)\n");
    return 2;
  }
  for (const BenchModel& model : bench_models()) {
    if (model.name != name) continue;
    const ReplayPair pair(model);
    for (int i = 0; i < 3; ++i) {  // warm caches, pools and lazy initialisation on both sides
      pair.eager_step();
      pair.replay_step();
    }
    std::printf("model %s nodes %zu steps %zu reps %d threads %d\n", name.c_str(),
                pair.cap.graph.nodes.size(), pair.executor.stats().plan_steps, reps,
                at::get_num_threads());
    std::fflush(stdout);
    CALLGRIND_ZERO_STATS;
    CALLGRIND_TOGGLE_COLLECT;
    for (int i = 0; i < reps; ++i) pair.eager_step();
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_DUMP_STATS_AT("eager");
    CALLGRIND_TOGGLE_COLLECT;
    for (int i = 0; i < reps; ++i) pair.replay_step();
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_DUMP_STATS_AT("replay");
    return 0;
  }
  std::fprintf(stderr, "--count-instructions: no model '%s'; models:", name.c_str());
  for (const BenchModel& model : bench_models()) std::fprintf(stderr, " %s", model.name.c_str());
  std::fprintf(stderr, "\n");
  return 2;
}

}  // namespace ca::bench

int main(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == "--count-instructions") {
    return ca::bench::count_instructions(argv[2], argc >= 4 ? std::max(1, std::atoi(argv[3])) : 5);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
