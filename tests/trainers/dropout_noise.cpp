// SPDX-License-Identifier: BSD-3-Clause
// Seeded once at start; every step after the first backward draws: dropout masks, a shuffled
// order of the data (randperm), noise added to the inputs, an in-place normal_() augmentation.
#include "trainers/programs.h"

namespace trainers {

int dropout_noise() {
  torch::manual_seed(2);
  torch::nn::Sequential net(torch::nn::Linear(8, 32), torch::nn::ReLU(), torch::nn::Dropout(0.3),
                            torch::nn::Linear(32, 32), torch::nn::Tanh(), torch::nn::Dropout(0.1),
                            torch::nn::Linear(32, 1));
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  const at::Tensor xs = torch::randn({96, 8});
  const at::Tensor ys = xs.sum(1, /*keepdim=*/true).sin();
  int step = 0;
  for (int epoch = 0; epoch < 4; ++epoch) {
    const at::Tensor order = torch::randperm(96);
    for (int b = 0; b < 96; b += 16, ++step) {
      const at::Tensor idx = order.slice(0, b, b + 16);
      at::Tensor x = xs.index_select(0, idx) + 0.05 * torch::randn({16, 8});
      at::Tensor jitter = torch::empty({16, 1});
      jitter.normal_(0, 0.01);
      opt.zero_grad();
      const at::Tensor loss = torch::mse_loss(net->forward(x), ys.index_select(0, idx) + jitter);
      loss.backward();
      opt.step();
      print_loss("loss", step, loss);
    }
  }
  print_hash("params", net->parameters());
  print_hash("after", {torch::randn({4})});  // the stream itself, after the last backward
  return 0;
}

}  // namespace trainers
