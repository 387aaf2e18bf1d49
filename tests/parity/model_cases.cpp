// SPDX-License-Identifier: BSD-3-Clause
#include "parity/parity_cases.h"

namespace ca::testing {

std::vector<ParityCase> model_cases() {
  return {
      {"lstm",
       [] {
         torch::nn::LSTM lstm(torch::nn::LSTMOptions(4, 6).num_layers(2));
         auto out = std::get<0>(lstm->forward(torch::randn({5, 3, 4})));
         return scalar(out.pow(2).sum());
       },
       1e-5},
      {"gru",
       [] {
         torch::nn::GRU gru(torch::nn::GRUOptions(4, 6));
         auto out = std::get<0>(gru->forward(torch::randn({5, 3, 4})));
         return scalar(out.sum());
       },
       1e-5},
      {"scaled_dot_product_attention",
       [] {
         auto q = torch::randn({2, 3, 5, 8}, torch::requires_grad());
         auto k = torch::randn({2, 3, 5, 8}, torch::requires_grad());
         auto v = torch::randn({2, 3, 5, 8}, torch::requires_grad());
         auto o = at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true);
         return scalar((o * torch::randn({2, 3, 5, 8})).sum());
       },
       1e-5},
      {"transformer_encoder_3_blocks",
       [] {
         torch::nn::TransformerEncoder enc(torch::nn::TransformerEncoderOptions(
             torch::nn::TransformerEncoderLayerOptions(16, 4).dim_feedforward(32).dropout(0.1), 3));
         enc->train();
         auto out = enc(torch::randn({6, 2, 16}));
         return scalar(out.pow(2).mean());
       },
       1e-5},
  };
}

}  // namespace ca::testing
