// SPDX-License-Identifier: BSD-3-Clause
// Throughput of N threads each training its own small MLP (forward, backward, SGD step) in one
// process, eagerly and under ca::enable(), in alternating rounds; and again with thread 0 scaling
// an activation's gradient in a tensor hook (under ca::enable() its backwards then run eagerly).
// Reports the median of the rounds' ratios, enabled / eager throughput, for all threads
// (`ratio_to_eager`) and for the threads other than thread 0 (`others_ratio`: what one thread's
// fallbacks cost the rest).
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "ca/compiled_backward.h"

namespace ca::bench {
namespace {

constexpr int kStepsPerThread = 300;

struct SmallMlp {
  torch::nn::Linear l1{32, 64}, l2{64, 64}, l3{64, 1};
  at::Tensor x = torch::randn({16, 32});
  at::Tensor y = torch::randn({16, 1});
  torch::optim::SGD opt{parameters(), torch::optim::SGDOptions(0.01)};

  std::vector<at::Tensor> parameters() const {
    std::vector<at::Tensor> all;
    for (const auto* l : {&l1, &l2, &l3}) {
      for (const at::Tensor& p : (*l)->parameters()) all.push_back(p);
    }
    return all;
  }
  void step(bool hooked) {
    opt.zero_grad();
    const at::Tensor h = torch::relu(l1->forward(x));
    if (hooked) h.register_hook([](const at::Tensor& g) { return g * 0.5; });
    torch::mse_loss(l3->forward(torch::relu(l2->forward(h))), y).backward();
    opt.step();
  }
};

// Steps per second of all threads, and of the threads other than thread 0 (each over its own
// time).
struct Rates {
  double all = 0, others = 0;
};

// Runs `steps` steps of each model, one thread a model, thread 0's hooked if `hooked`.
Rates train(std::vector<SmallMlp>& models, int steps, bool hooked) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> secs(models.size());
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  for (size_t t = 0; t < models.size(); ++t) {
    pool.emplace_back([&, t] {
      const auto begin = Clock::now();
      for (int s = 0; s < steps; ++s) models[t].step(hooked && t == 0);
      secs[t] = std::chrono::duration<double>(Clock::now() - begin).count();
    });
  }
  for (std::thread& th : pool) th.join();
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  Rates r;
  r.all = static_cast<double>(models.size()) * steps / wall;
  for (size_t t = 1; t < models.size(); ++t) r.others += steps / secs[t];
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Each iteration is one round: the models train eagerly, then under ca::enable() (a fresh
// engine: its captures run in an untimed warm-up), and the round's ratios are kept; the machine's
// drift then moves both sides of a ratio alike. The reported time is the enabled phase's.
void BM_Threads(benchmark::State& state, bool hooked) {
  const int n = static_cast<int>(state.range(0));
  torch::manual_seed(0);
  std::vector<SmallMlp> models(static_cast<size_t>(n));
  train(models, 20, hooked);  // warm-up: the allocator's caches
  std::vector<double> ratios, others;
  CompiledBackwardStats last;
  for (auto _ : state) {
    const Rates eager = train(models, kStepsPerThread, hooked);
    enable();
    train(models, 5, hooked);  // the captures
    const Rates mine = train(models, kStepsPerThread, hooked);
    last = enabled_stats();
    disable();
    ratios.push_back(mine.all / eager.all);
    if (n > 1) others.push_back(mine.others / eager.others);
    state.SetIterationTime(n * kStepsPerThread / mine.all);
  }
  state.counters["ratio_to_eager"] = median(ratios);
  state.counters["ratio_min"] = *std::min_element(ratios.begin(), ratios.end());
  state.counters["ratio_max"] = *std::max_element(ratios.begin(), ratios.end());
  if (n > 1) state.counters["others_ratio"] = median(others);
  state.counters["fallbacks"] = static_cast<double>(last.eager_fallbacks);
  state.counters["hits"] = static_cast<double>(last.hits);
}

const bool kRegistered = [] {
  for (bool hooked : {false, true}) {
    for (int n : {1, 2, 4}) {
      if (hooked && n == 1) continue;
      benchmark::RegisterBenchmark(hooked ? "threads_one_falls_back" : "threads", BM_Threads,
                                   hooked)
          ->Arg(n)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  return true;
}();

}  // namespace
}  // namespace ca::bench
