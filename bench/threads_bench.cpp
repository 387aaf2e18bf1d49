// SPDX-License-Identifier: BSD-3-Clause
// Throughput of N threads each training its own small MLP (forward, backward, SGD step) in one
// process: the same program eagerly, then under ca::enable(); and again with thread 0 scaling an
// activation's gradient in a tensor hook (under ca::enable() its backwards then run eagerly). The
// eager runs are registered first and measured before this process ever enables ca-replay; each
// enabled run reports its ratio to the eager run of the same N and variant, for all threads
// (`ratio_to_eager`) and for the threads other than thread 0 (`others_ratio`: what one thread's
// fallbacks cost the rest).
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <chrono>
#include <map>
#include <thread>
#include <utility>
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

// The eager runs' rates, by thread count and variant.
std::map<std::pair<int, bool>, Rates>& eager_rates() {
  static std::map<std::pair<int, bool>, Rates> rates;
  return rates;
}

void BM_Threads(benchmark::State& state, bool enabled, bool hooked) {
  const int n = static_cast<int>(state.range(0));
  torch::manual_seed(0);
  std::vector<SmallMlp> models(static_cast<size_t>(n));
  if (enabled) enable();
  train(models, 20, hooked);  // warm-up: the captures, the allocator's caches
  Rates sum;
  for (auto _ : state) {
    const Rates r = train(models, kStepsPerThread, hooked);
    sum.all += r.all;
    sum.others += r.others;
    state.SetIterationTime(n * kStepsPerThread / r.all);
  }
  const auto iterations = static_cast<double>(state.iterations());
  const Rates mean{sum.all / iterations, sum.others / iterations};
  state.counters["steps_per_s"] = mean.all;
  if (!enabled) {
    eager_rates()[{n, hooked}] = mean;
    return;
  }
  const CompiledBackwardStats s = enabled_stats();
  disable();
  // Ratios only where the eager run of the same N and variant ran (a filter may leave it out).
  if (const auto eager = eager_rates().find({n, hooked}); eager != eager_rates().end()) {
    state.counters["ratio_to_eager"] = mean.all / eager->second.all;
    if (n > 1) state.counters["others_ratio"] = mean.others / eager->second.others;
  }
  state.counters["fallbacks"] = static_cast<double>(s.eager_fallbacks);
  state.counters["misses"] = static_cast<double>(s.misses);
}

const bool kRegistered = [] {
  for (bool enabled : {false, true}) {
    for (bool hooked : {false, true}) {
      for (int n : {1, 2, 4}) {
        if (hooked && n == 1) continue;
        const std::string name = std::string(enabled ? "threads_enabled" : "threads_eager") +
                                 (hooked ? "_one_falls_back" : "");
        benchmark::RegisterBenchmark(name.c_str(), BM_Threads, enabled, hooked)
            ->Arg(n)
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  return true;
}();

}  // namespace
}  // namespace ca::bench
