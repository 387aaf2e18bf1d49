// SPDX-License-Identifier: BSD-3-Clause
// A GAN on 2-D points: two models, two Adam optimizers, the generator's samples detach()ed for
// the discriminator's step, two backwards per step and fresh noise drawn every step.
#include "trainers/programs.h"

namespace trainers {

int gan() {
  torch::manual_seed(1);
  torch::nn::Sequential gen(torch::nn::Linear(4, 16), torch::nn::ReLU(), torch::nn::Linear(16, 2));
  torch::nn::Sequential disc(torch::nn::Linear(2, 16), torch::nn::LeakyReLU(),
                             torch::nn::Linear(16, 1));
  torch::optim::Adam opt_g(gen->parameters(), torch::optim::AdamOptions(2e-3).betas({0.5, 0.9}));
  torch::optim::Adam opt_d(disc->parameters(), torch::optim::AdamOptions(2e-3).betas({0.5, 0.9}));
  const at::Tensor centre = torch::tensor({2.0f, -1.0f});
  for (int step = 0; step < 40; ++step) {
    const at::Tensor real = torch::randn({32, 2}) * 0.3 + centre;
    const at::Tensor fake = gen->forward(torch::randn({32, 4}));

    opt_d.zero_grad();
    const at::Tensor d_loss =
        torch::binary_cross_entropy_with_logits(disc->forward(real), torch::ones({32, 1})) +
        torch::binary_cross_entropy_with_logits(disc->forward(fake.detach()),
                                                torch::zeros({32, 1}));
    d_loss.backward();
    opt_d.step();

    opt_g.zero_grad();
    const at::Tensor g_loss =
        torch::binary_cross_entropy_with_logits(disc->forward(fake), torch::ones({32, 1}));
    g_loss.backward();
    opt_g.step();
    print_loss("d_loss", step, d_loss);
    print_loss("g_loss", step, g_loss);
  }
  print_hash("generator", gen->parameters());
  print_hash("discriminator", disc->parameters());
  return 0;
}

}  // namespace trainers
