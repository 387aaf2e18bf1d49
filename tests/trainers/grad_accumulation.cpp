// SPDX-License-Identifier: BSD-3-Clause
// Gradient accumulation: four micro-batches backwarded one by one into the same .grad, the loss
// scaled by 1/4, clip_grad_norm_, then one optimizer step.
#include "trainers/programs.h"

namespace trainers {

int grad_accumulation() {
  torch::manual_seed(8);
  torch::nn::Sequential net(torch::nn::Linear(7, 20), torch::nn::SiLU(), torch::nn::Linear(20, 2));
  torch::optim::Adagrad opt(net->parameters(), torch::optim::AdagradOptions(0.05));
  const at::Tensor x = torch::randn({64, 7});
  const at::Tensor y = torch::stack({x.sum(1), x.narrow(1, 0, 2).prod(1)}, 1);
  for (int step = 0; step < 12; ++step) {
    opt.zero_grad();
    at::Tensor total = torch::zeros({});
    for (int micro = 0; micro < 4; ++micro) {
      const at::Tensor xb = x.slice(0, micro * 16, micro * 16 + 16);
      const at::Tensor loss =
          torch::l1_loss(net->forward(xb), y.slice(0, micro * 16, micro * 16 + 16));
      (loss / 4).backward();
      total = total + loss.detach() / 4;
    }
    const double norm = torch::nn::utils::clip_grad_norm_(net->parameters(), 1.0);
    opt.step();
    print_loss("loss", step, total);
    std::printf("grad_norm %d %.17g\n", step, norm);
  }
  print_hash("params", net->parameters());
  return 0;
}

}  // namespace trainers
