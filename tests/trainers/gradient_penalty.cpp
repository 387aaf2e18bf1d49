// SPDX-License-Identifier: BSD-3-Clause
// A WGAN-GP style critic: the gradient of the critic at interpolated points, taken with
// grad(create_graph=true), enters the loss, and backward() runs through that double-backward
// graph. Every few steps the critic also takes a plain (penalty-free) step.
#include "trainers/programs.h"

namespace trainers {

int gradient_penalty() {
  torch::manual_seed(4);
  torch::nn::Sequential critic(torch::nn::Linear(3, 24), torch::nn::Tanh(),
                               torch::nn::Linear(24, 1));
  torch::optim::Adam opt(critic->parameters(), torch::optim::AdamOptions(1e-3).betas({0.5, 0.9}));
  for (int step = 0; step < 30; ++step) {
    const at::Tensor real = torch::randn({16, 3}) + 1;
    const at::Tensor fake = torch::randn({16, 3});
    opt.zero_grad();
    at::Tensor loss = critic->forward(fake).mean() - critic->forward(real).mean();
    if (step % 3 != 2) {
      const at::Tensor alpha = torch::rand({16, 1});
      const at::Tensor mixed = (alpha * real + (1 - alpha) * fake).requires_grad_();
      const at::Tensor score = critic->forward(mixed);
      const at::Tensor g = torch::autograd::grad({score}, {mixed}, {torch::ones_like(score)},
                                                 /*retain_graph=*/true, /*create_graph=*/true)[0];
      const at::Tensor penalty = (g.norm(2, 1) - 1).pow(2).mean();
      loss = loss + 10 * penalty;
      print_loss("penalty", step, penalty);
    }
    loss.backward();
    opt.step();
    print_loss("loss", step, loss);
  }
  print_hash("params", critic->parameters());
  return 0;
}

}  // namespace trainers
