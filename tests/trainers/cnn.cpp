// SPDX-License-Identifier: BSD-3-Clause
// A small CNN on random 8x8 images: conv, batch norm, max pool, flatten, linear; SGD with
// momentum and weight decay, and a learning-rate schedule.
#include "trainers/programs.h"

namespace trainers {

int cnn() {
  torch::manual_seed(13);
  torch::nn::Sequential net(torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 4, 3).padding(1)),
                            torch::nn::BatchNorm2d(4), torch::nn::ReLU(), torch::nn::MaxPool2d(2),
                            torch::nn::Flatten(), torch::nn::Linear(64, 3));
  torch::optim::SGD opt(net->parameters(),
                        torch::optim::SGDOptions(0.05).momentum(0.9).weight_decay(1e-4));
  torch::optim::StepLR sched(opt, 10, 0.5);
  const at::Tensor images = torch::randn({40, 1, 8, 8});
  const at::Tensor labels = torch::randint(0, 3, {40});
  for (int step = 0; step < 25; ++step) {
    const int b = (step * 8) % 40;
    opt.zero_grad();
    const at::Tensor loss = torch::cross_entropy_loss(net->forward(images.slice(0, b, b + 8)),
                                                      labels.slice(0, b, b + 8));
    loss.backward();
    opt.step();
    sched.step();
    print_loss("loss", step, loss);
  }
  std::vector<at::Tensor> state = net->parameters();
  for (const at::Tensor& b : net->buffers()) state.push_back(b);
  print_hash("params_and_buffers", state);
  return 0;
}

}  // namespace trainers
