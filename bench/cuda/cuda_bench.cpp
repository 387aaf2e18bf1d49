// SPDX-License-Identifier: BSD-3-Clause
// Times one backward three ways on the GPU, each after warm-up, synchronised, median of N:
// eager backward (on a fresh forward each time, the forward not timed), replay of the captured
// graph, and its CUDA-graph replay. Models: the deep narrow MLP (32 x Linear(32, 32) + tanh,
// batch 8; launch-bound) and a wide MLP (8 x Linear(2048, 2048) + relu, batch 4096; kernel-bound).
// Prints one line per model; exits 0 without a CUDA device (saying so).
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "ca/capture.h"
#include "ca/executor.h"

namespace {

using Clock = std::chrono::steady_clock;
const c10::Device kCuda(c10::kCUDA, 0);

double median_us(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Median wall time of `step` (µs) after `warmup` untimed calls; `prepare` runs untimed before
/// each.
double time_us(int warmup, int runs, const std::function<void()>& prepare,
               const std::function<void()>& step) {
  std::vector<double> us;
  for (int i = 0; i < warmup + runs; ++i) {
    prepare();
    torch::cuda::synchronize();
    const auto start = Clock::now();
    step();
    torch::cuda::synchronize();
    if (i >= warmup)
      us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  return median_us(us);
}

torch::nn::Sequential mlp(int layers, int width, bool tanh) {
  torch::nn::Sequential net;
  for (int i = 0; i < layers; ++i) {
    net->push_back(torch::nn::Linear(width, width));
    if (tanh) {
      net->push_back(torch::nn::Tanh());
    } else {
      net->push_back(torch::nn::ReLU());
    }
  }
  net->to(kCuda);
  return net;
}

void bench(const char* name, torch::nn::Sequential net, int batch, int width, int runs) {
  const auto x = torch::randn({batch, width}, torch::TensorOptions().device(kCuda));
  auto forward = [&] { return net->forward(x).pow(2).mean(); };
  auto params = net->parameters();
  auto clear = [&] {
    for (auto& p : params) p.mutable_grad().reset();
  };
  at::Tensor loss;
  const double eager = time_us(
      3, runs,
      [&] {
        clear();
        loss = forward();
      },
      [&] { loss.backward(); });

  const ca::CaptureResult cap = ca::capture({forward()});
  ca::ExecutorOptions options;
  options.device = kCuda;
  const ca::Executor plain(cap.graph, options);
  options.cuda_graph = true;
  const ca::Executor graphed(cap.graph, options);
  auto clear_inputs = [&] {
    for (size_t k : plain.grad_targets()) cap.inputs[k].mutable_grad().reset();
  };
  const double replay = time_us(3, runs, clear_inputs, [&] { plain.run(cap.inputs); });
  const double cuda_graph = time_us(3, runs, clear_inputs, [&] { graphed.run(cap.inputs); });
  std::printf(
      "[bench] %s (%zu nodes): eager %.1f us, replay %.1f us (%.2fx eager speed), "
      "cuda-graph %.1f us (%.2fx eager speed)\n",
      name, cap.graph.nodes.size(), eager, replay, eager / replay, cuda_graph, eager / cuda_graph);
}

}  // namespace

int main(int argc, char** argv) {
  if (!torch::cuda::is_available()) {
    std::printf("[bench] skipped: no CUDA device\n");
    return 0;
  }
  const int runs = argc > 1 ? std::max(5, std::atoi(argv[1])) : 50;
  torch::manual_seed(0);
  bench("deep_narrow_mlp batch 8", mlp(32, 32, true), 8, 32, runs);
  bench("wide_mlp 8x2048 batch 4096", mlp(8, 2048, false), 4096, 2048, std::max(5, runs / 5));
  return 0;
}
