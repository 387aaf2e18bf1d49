// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The data-parallel example's models and data: written the way a libtorch user writes them.

#include <torch/torch.h>

#include <string>

namespace ddp {

/// A regression net with an auxiliary head that only some steps use (its parameters then get
/// no gradient on those ranks). "mlp": deep and narrow; "transformer": one encoder block.
struct NetImpl : torch::nn::Module {
  NetImpl(const std::string& kind, int64_t features);
  torch::Tensor forward(const torch::Tensor& x);

  std::string kind;
  torch::nn::Sequential body{nullptr};
  torch::nn::TransformerEncoderLayer block{nullptr};
  torch::nn::Linear head{nullptr};
  torch::nn::Linear aux{nullptr};  ///< used by the aux branch only
};
TORCH_MODULE(Net);

/// A synthetic dataset, the same on every rank (fixed seed): inputs [n, features], targets
/// [n, 1]; the transformer reads each row as a sequence of 4 tokens.
struct Data {
  torch::Tensor x, y;
};
Data make_data(int64_t samples, int64_t features);

}  // namespace ddp
