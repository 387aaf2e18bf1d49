// SPDX-License-Identifier: BSD-3-Clause
// Per-step cost of the trainer API: CompiledBackward::backward on a fresh forward's graph (check,
// bind, replay) against eager backward on the same kind of forward; and, as fractions of eager
// backward, the steady-state check alone (check_frac) and the full walk + key alone
// (walk_key_frac: what a step pays where the check cannot take its graph). Forwards are not timed.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <memory>

#include "bench_models.h"
#include "ca/compiled_backward.h"
#include "capture/graph_walk.h"
#include "trainer/step_check.h"
#include "trainer/step_key.h"

namespace ca::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void BM_TrainerStep(benchmark::State& state, const BenchModel& model) {
  torch::manual_seed(0);
  CompiledBackward cb;
  cb.backward({model.forward()});                  // the one capture
  std::unique_ptr<const detail::StepCheck> check;  // as the capture recorded it
  {
    const at::Tensor loss = model.forward();
    auto walk = detail::walk_from_root(detail::make_root({loss}, {}), /*keys=*/true, {},
                                       detail::NodeOrder::kEager, /*opaque=*/true);
    const detail::StepKey key = detail::step_key(*walk, "");
    check = detail::StepCheck::record(*walk, walk->compiler.tensor_args.inputs, key);
  }
  double eager = 0, step = 0, walk_key = 0, checking = 0;
  for (auto _ : state) {
    at::Tensor loss = model.forward();
    auto start = Clock::now();
    loss.backward();
    eager += seconds_since(start);

    loss = model.forward();
    start = Clock::now();
    {
      auto walk = detail::walk_from_root(detail::make_root({loss}, {}), /*keys=*/true, {},
                                         detail::NodeOrder::kEager, /*opaque=*/true);
      benchmark::DoNotOptimize(detail::step_key(*walk, "").hash());
    }
    walk_key += seconds_since(start);

    if (check) {
      start = Clock::now();
      detail::StepCheck::Step checked;
      benchmark::DoNotOptimize(check->matches(detail::make_root({loss}, {}), checked));
      checking += seconds_since(start);
    }

    start = Clock::now();
    cb.backward({loss});
    const double t = seconds_since(start);
    step += t;
    state.SetIterationTime(t);
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["eager_us"] = 1e6 * eager / n;
  state.counters["step_us"] = 1e6 * step / n;
  state.counters["step_ratio"] = step / eager;
  state.counters["walk_key_frac"] = walk_key / eager;
  state.counters["check_frac"] = check ? checking / eager : -1;  // -1: the graph is not checkable
  state.counters["misses"] = static_cast<double>(cb.stats().misses);
  state.counters["checked_hits"] = static_cast<double>(cb.stats().checked_hits);
  state.counters["opaque_calls"] = static_cast<double>(cb.stats().opaque_calls);
  state.counters["fallbacks"] = static_cast<double>(cb.stats().eager_fallbacks);
}

const bool kRegistered = (register_per_model("trainer_step", BM_TrainerStep),
                          register_model("trainer_step", BM_TrainerStep, deep_narrow_mlp_hooked()),
                          register_model("trainer_step", BM_TrainerStep, gpt2_torchscript()), true);

}  // namespace
}  // namespace ca::bench

BENCHMARK_MAIN();
