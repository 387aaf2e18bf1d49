// SPDX-License-Identifier: BSD-3-Clause
// Mixed float64/float32: a float64 feature layer feeding a float32 head (casts both ways in the
// graph), the loss computed in float64.
#include "trainers/programs.h"

namespace trainers {

int mixed_precision() {
  torch::manual_seed(12);
  torch::nn::Linear features(5, 10), head(10, 1);
  features->to(at::kDouble);
  std::vector<at::Tensor> params = features->parameters();
  for (const at::Tensor& p : head->parameters()) params.push_back(p);
  torch::optim::Adam opt(params, torch::optim::AdamOptions(1e-2));
  const at::Tensor x = torch::randn({25, 5}, at::kDouble);
  const at::Tensor y = x.pow(2).sum(1, true);
  for (int step = 0; step < 30; ++step) {
    opt.zero_grad();
    const at::Tensor h = torch::softplus(features->forward(x)).to(at::kFloat);
    const at::Tensor out = head->forward(h).to(at::kDouble);
    const at::Tensor loss = torch::huber_loss(out, y);
    loss.backward();
    opt.step();
    print_loss("loss", step, loss);
  }
  print_hash("params", params);
  return 0;
}

}  // namespace trainers
