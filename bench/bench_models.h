// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The benchmarked models: each builds fresh parameters and returns one forward's loss.

#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

namespace ca::bench {

struct BenchModel {
  std::string name;
  std::function<at::Tensor()> forward;  ///< runs a forward, returns the scalar loss
  std::vector<at::Tensor> parameters;   ///< what an optimizer (or data_parallel) is given
};

/// deep_narrow_mlp (overhead-bound), cnn, transformer_block.
std::vector<BenchModel> bench_models();

/// The traced GPT-2 that make_gpt2.py writes at build time (gpt2_bench.cpp; trainer_bench only),
/// loaded on its first forward, with TorchScript's profiling executor off.
BenchModel gpt2_torchscript();
/// deep_narrow_mlp with a recording hook on its middle activation (trainer API only: capture
/// refuses hooks).
BenchModel deep_narrow_mlp_hooked();

/// Registers `fn` for `model` as "<prefix>/<model>" (manual time, microseconds).
void register_model(const std::string& prefix, void (*fn)(benchmark::State&, const BenchModel&),
                    const BenchModel& model);

/// Registers `fn` once per model of bench_models() as "<prefix>/<model>" (manual time,
/// microseconds), after setting the intra-op threads: one by default, since on a small shared
/// machine OpenMP barriers make timings of overhead-bound graphs meaningless; CA_BENCH_THREADS=N
/// overrides.
void register_per_model(const std::string& prefix,
                        void (*fn)(benchmark::State&, const BenchModel&));

}  // namespace ca::bench
