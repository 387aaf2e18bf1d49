// SPDX-License-Identifier: BSD-3-Clause
// retain_grad() on an activation every step (its .grad is printed), a tensor hook that scales an
// activation's gradient on some steps, and a hook that records the gradient norm on others.
#include "trainers/programs.h"

namespace trainers {

int hooks_and_retain_grad() {
  torch::manual_seed(5);
  torch::nn::Linear l1(6, 12), l2(12, 1);
  std::vector<at::Tensor> params = l1->parameters();
  for (const at::Tensor& p : l2->parameters()) params.push_back(p);
  torch::optim::SGD opt(params, torch::optim::SGDOptions(0.05));
  const at::Tensor x = torch::randn({20, 6});
  const at::Tensor y = torch::randn({20, 1});
  for (int step = 0; step < 30; ++step) {
    opt.zero_grad();
    at::Tensor h = torch::relu(l1->forward(x));
    h.retain_grad();
    double seen_norm = -1;
    if (step % 10 == 7) h.register_hook([](at::Tensor g) { return g * 0.5; });
    if (step % 10 == 8) {
      h.register_hook([&seen_norm](const at::Tensor& g) { seen_norm = g.norm().item<double>(); });
    }
    const at::Tensor loss = torch::mse_loss(l2->forward(h), y);
    loss.backward();
    opt.step();
    print_loss("loss", step, loss);
    print_loss("h_grad_sum", step, h.grad().sum());
    if (seen_norm >= 0) std::printf("hook saw %.9g\n", seen_norm);
  }
  print_hash("params", params);
  return 0;
}

}  // namespace trainers
