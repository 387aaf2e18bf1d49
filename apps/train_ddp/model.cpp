// SPDX-License-Identifier: BSD-3-Clause
#include "model.h"

namespace ddp {

namespace nn = torch::nn;

NetImpl::NetImpl(const std::string& kind_name, int64_t features) : kind(kind_name) {
  if (kind == "mlp") {
    body = register_module("body", nn::Sequential());
    for (int i = 0; i < 16; ++i) {
      body->push_back(nn::Linear(features, features));
      body->push_back(nn::Tanh());
    }
  } else {
    block = register_module(
        "block",
        nn::TransformerEncoderLayer(
            nn::TransformerEncoderLayerOptions(features / 4, 4).dim_feedforward(64).dropout(0.0)));
  }
  head = register_module("head", nn::Linear(features, 1));
  aux = register_module("aux", nn::Linear(features, 1));
}

torch::Tensor NetImpl::forward(const torch::Tensor& x) {
  if (body) return body->forward(x);
  // [batch, features] as [4 tokens, batch, features / 4], back to [batch, features].
  auto seq = x.view({x.size(0), 4, -1}).transpose(0, 1);
  return block->forward(seq).transpose(0, 1).reshape({x.size(0), -1});
}

Data make_data(int64_t samples, int64_t features) {
  torch::manual_seed(1234);
  Data d;
  d.x = torch::randn({samples, features});
  d.y = d.x.sum(1, true).sin();
  return d;
}

}  // namespace ddp
