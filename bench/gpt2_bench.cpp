// SPDX-License-Identifier: BSD-3-Clause
// A real model trained from C++: the traced GPT-2 that bench/make_gpt2.py writes at build time,
// trained with AdamW the way libtorch users train models written in Python. Reports its backward
// under ca::enable() against eager backward on alternating steps of one run (backward_ratio),
// and whether the two give bitwise the same gradients from the same parameters. Two rows: with
// TorchScript's graph optimization off, and on (its default: the profiling executor fuses the
// forward into DifferentiableGraphs, whose backward nodes replay as opaque calls of themselves).
#include <benchmark/benchmark.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/function.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <chrono>
#include <memory>

#include "bench_models.h"
#include "ca/compiled_backward.h"

namespace ca::bench {
namespace {

using Clock = std::chrono::steady_clock;

// make_gpt2.py's vocabulary, batch and context.
constexpr int64_t kVocab = 512, kBatch = 8, kContext = 64;

struct Gpt2 {
  torch::jit::Module module;
  at::Tensor idx, targets;

  explicit Gpt2(bool optimize = false) : module(load(optimize)) {
    module.train();
    idx = torch::randint(0, kVocab, {kBatch, kContext});
    targets = torch::roll(idx, -1, 1);
  }
  // The setting is process-wide and read when a graph is first planned: set while it loads.
  static torch::jit::Module load(bool optimize) {
    torch::jit::setGraphExecutorOptimize(optimize);
    return torch::jit::load(CA_GPT2_MODEL);
  }
  std::vector<at::Tensor> parameters() const {
    std::vector<at::Tensor> all;
    for (const at::Tensor& p : module.parameters()) all.push_back(p);
    return all;
  }
  at::Tensor loss() { return module.forward({idx, targets}).toTensor(); }
};

// Eager backward while ca::enable() is on: libtorch's own engine, as loss.backward() runs it.
void eager_backward(const at::Tensor& loss) {
  torch::autograd::Engine::get_base_engine().execute(
      {torch::autograd::impl::gradient_edge(loss)}, {at::ones_like(loss)}, /*keep_graph=*/false,
      /*create_graph=*/false, /*accumulate_grad=*/true);
}

std::vector<at::Tensor> grads_of(const std::vector<at::Tensor>& params) {
  std::vector<at::Tensor> g;
  for (const at::Tensor& p : params) g.push_back(p.grad().clone());
  return g;
}

void BM_Gpt2AdamW(benchmark::State& state, bool optimize) {
  torch::manual_seed(0);
  Gpt2 gpt2(optimize);
  const std::vector<at::Tensor> params = gpt2.parameters();
  torch::optim::AdamW opt(params, torch::optim::AdamWOptions(1e-4));
  EnableGuard enabled;
  opt.zero_grad();
  gpt2.loss().backward();  // the capture
  // Bitwise check: the same parameters' gradients, eager and replayed.
  opt.zero_grad();
  eager_backward(gpt2.loss());
  const std::vector<at::Tensor> eager_grads = grads_of(params);
  opt.zero_grad();
  gpt2.loss().backward();
  bool bitwise = true;
  for (size_t i = 0; i < params.size(); ++i)
    bitwise &= torch::equal(params[i].grad(), eager_grads[i]);

  double eager = 0, replayed = 0;
  for (auto _ : state) {
    opt.zero_grad();
    at::Tensor loss = gpt2.loss();
    auto start = Clock::now();
    eager_backward(loss);
    eager += std::chrono::duration<double>(Clock::now() - start).count();
    opt.step();

    opt.zero_grad();
    loss = gpt2.loss();
    start = Clock::now();
    loss.backward();
    const double t = std::chrono::duration<double>(Clock::now() - start).count();
    replayed += t;
    state.SetIterationTime(t);
    opt.step();
  }
  const double n = static_cast<double>(state.iterations());
  const CompiledBackwardStats stats = enabled_stats();
  state.counters["eager_us"] = 1e6 * eager / n;
  state.counters["enabled_us"] = 1e6 * replayed / n;
  state.counters["backward_ratio"] = replayed / eager;
  state.counters["bitwise_equal"] = bitwise ? 1 : 0;
  state.counters["hits"] = static_cast<double>(stats.hits);
  state.counters["checked_hits"] = static_cast<double>(stats.checked_hits);
  state.counters["misses"] = static_cast<double>(stats.misses);
  state.counters["fallbacks"] = static_cast<double>(stats.eager_fallbacks);
  state.counters["opaque_calls"] = static_cast<double>(stats.opaque_calls);
}

BENCHMARK_CAPTURE(BM_Gpt2AdamW, gpt2_torchscript, /*optimize=*/false)
    ->Name("enabled_adamw/gpt2_torchscript")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Gpt2AdamW, gpt2_torchscript_profiling, /*optimize=*/true)
    ->Name("enabled_adamw/gpt2_torchscript_profiling")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BenchModel gpt2_torchscript() {
  // Loaded on the first forward (registration runs before main), so no parameters to list.
  auto gpt2 = std::make_shared<std::unique_ptr<Gpt2>>();
  auto forward = [gpt2]() {
    if (!*gpt2) *gpt2 = std::make_unique<Gpt2>();
    return (*gpt2)->loss();
  };
  return {"gpt2_torchscript", forward, {}};
}

}  // namespace ca::bench
