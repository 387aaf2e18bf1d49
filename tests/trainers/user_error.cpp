// SPDX-License-Identifier: BSD-3-Clause
// A user's mistake that eager reports: a second backward through a graph already freed (no
// retain_graph). The program catches torch's error, prints its first line and carries on; a
// non-differentiable output's backward is caught the same way.
#include "trainers/programs.h"

namespace trainers {
namespace {

void print_error(int step, const c10::Error& e) {
  const std::string what = e.what_without_backtrace();
  std::printf("step %d error: %s\n", step, what.substr(0, what.find('\n')).c_str());
}

}  // namespace

int user_error() {
  torch::manual_seed(11);
  torch::nn::Sequential net(torch::nn::Linear(4, 8), torch::nn::Sigmoid(), torch::nn::Linear(8, 1));
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.2));
  const at::Tensor x = torch::randn({12, 4});
  const at::Tensor y = torch::randn({12, 1});
  for (int step = 0; step < 20; ++step) {
    opt.zero_grad();
    const at::Tensor loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    if (step % 5 == 4) {
      try {
        loss.backward();  // the graph was freed by the first
      } catch (const c10::Error& e) {
        print_error(step, e);
      }
      try {
        loss.detach().backward();  // nothing requires grad
      } catch (const c10::Error& e) {
        print_error(step, e);
      }
    }
    opt.step();
    print_loss("loss", step, loss);
  }
  print_hash("params", net->parameters());
  return 0;
}

}  // namespace trainers
