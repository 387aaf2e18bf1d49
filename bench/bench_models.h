#pragma once
// The benchmarked models: each builds fresh parameters and returns one forward's loss.

#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

namespace ca::bench {

struct BenchModel {
  std::string name;
  std::function<at::Tensor()> forward;  ///< runs a forward, returns the scalar loss
};

/// deep_narrow_mlp (overhead-bound), cnn, transformer_block.
std::vector<BenchModel> bench_models();

}  // namespace ca::bench
