// SPDX-License-Identifier: BSD-3-Clause
// Two heads on a shared trunk, each loss backwarded on its own into the shared parameters: the
// first keeps the graph (retain_graph) for the second, and on odd steps the second head's loss
// is backwarded twice through the same retained graph.
#include "trainers/programs.h"

namespace trainers {

int two_losses() {
  torch::manual_seed(7);
  torch::nn::Sequential trunk(torch::nn::Linear(5, 16), torch::nn::GELU());
  torch::nn::Linear head_a(16, 1), head_b(16, 4);
  std::vector<at::Tensor> params = trunk->parameters();
  for (const auto& m : {head_a->parameters(), head_b->parameters()}) {
    params.insert(params.end(), m.begin(), m.end());
  }
  torch::optim::RMSprop opt(params, torch::optim::RMSpropOptions(3e-3));
  const at::Tensor x = torch::randn({18, 5});
  const at::Tensor ya = x.sum(1, true);
  const at::Tensor yb = torch::randint(0, 4, {18});
  for (int step = 0; step < 30; ++step) {
    opt.zero_grad();
    const at::Tensor feats = trunk->forward(x);
    const at::Tensor la = torch::smooth_l1_loss(head_a->forward(feats), ya);
    const at::Tensor lb = torch::nll_loss(torch::log_softmax(head_b->forward(feats), 1), yb);
    la.backward({}, /*retain_graph=*/true);
    if (step % 2 == 1) (lb * 0.5).backward({}, /*retain_graph=*/true);
    lb.backward();
    opt.step();
    print_loss("loss_a", step, la);
    print_loss("loss_b", step, lb);
  }
  print_hash("params", params);
  return 0;
}

}  // namespace trainers
