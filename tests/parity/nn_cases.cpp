// SPDX-License-Identifier: BSD-3-Clause
#include "parity/parity_cases.h"

namespace ca::testing {

namespace F = torch::nn::functional;

std::vector<ParityCase> nn_cases() {
  return {
      {"conv1d_bias",
       [] {
         auto w = leaf({4, 3, 3}), b = leaf({4});
         return scalar(torch::conv1d(torch::randn({2, 3, 10}), w, b, 1, 1).relu().sum());
       }},
      {"conv2d_groups_stride",
       [] {
         auto x = leaf({2, 4, 9, 9}), w = leaf({6, 2, 3, 3}), b = leaf({6});
         return scalar(torch::conv2d(x, w, b, 2, 1, 1, 2).pow(2).mean());
       }},
      {"batch_norm_training",
       [] {
         torch::nn::BatchNorm2d bn(4);
         bn->train();
         auto x = leaf({3, 4, 5, 5});
         return scalar((bn(x) * torch::randn({3, 4, 5, 5})).sum());
       }},
      {"layer_norm",
       [] {
         torch::nn::LayerNorm ln(torch::nn::LayerNormOptions({6}));
         auto x = leaf({4, 6});
         return scalar((ln(x) * torch::randn({4, 6})).sum());
       }},
      {"group_norm",
       [] {
         torch::nn::GroupNorm gn(2, 4);
         auto x = leaf({3, 4, 5});
         return scalar((gn(x) * torch::randn({3, 4, 5})).sum());
       }},
      {"softmax",
       [] {
         auto x = leaf({4, 7});
         return scalar((torch::softmax(x, 1) * torch::randn({4, 7})).sum());
       }},
      {"log_softmax",
       [] {
         auto x = leaf({4, 7});
         return scalar((torch::log_softmax(x, 0) * torch::randn({4, 7})).sum());
       }},
      {"cross_entropy",
       [] {
         auto w = leaf({5, 8});
         auto logits = torch::linear(torch::randn({6, 8}), w);
         return scalar(F::cross_entropy(logits, torch::randint(0, 5, {6})));
       }},
      {"nll_loss_weighted",
       [] {
         auto x = leaf({6, 5});
         auto opts = F::NLLLossFuncOptions().weight(torch::rand({5}));
         return scalar(F::nll_loss(torch::log_softmax(x, 1), torch::randint(0, 5, {6}), opts));
       }},
      {"embedding_padding_idx",
       [] {
         torch::nn::Embedding emb(torch::nn::EmbeddingOptions(10, 4).padding_idx(0));
         auto idx = torch::tensor({{0, 3, 3}, {9, 0, 1}});
         return scalar((emb(idx) * torch::randn({2, 3, 4})).sum());
       }},
      {"max_pool2d",
       [] {
         auto x = leaf({2, 3, 8, 8});
         return scalar(F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(2).padding(1)).sum());
       }},
      {"avg_pool2d",
       [] {
         auto x = leaf({2, 3, 8, 8});
         return scalar(F::avg_pool2d(x, F::AvgPool2dFuncOptions(2)).pow(2).sum());
       }},
      {"dropout_saved_mask",
       [] {
         auto x = leaf({8, 8});
         return scalar((F::dropout(x, F::DropoutFuncOptions().p(0.3).training(true)) * x).sum());
       }},
  };
}

}  // namespace ca::testing
