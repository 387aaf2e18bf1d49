// SPDX-License-Identifier: BSD-3-Clause
// A model with BatchNorm and Dropout trained in train() mode, with an evaluation pass in eval()
// under NoGradGuard after every epoch (running statistics frozen, no graph built).
#include "trainers/programs.h"

namespace trainers {
namespace {

struct NetImpl : torch::nn::Module {
  NetImpl()
      : fc1(register_module("fc1", torch::nn::Linear(10, 32))),
        bn(register_module("bn", torch::nn::BatchNorm1d(32))),
        drop(register_module("drop", torch::nn::Dropout(0.2))),
        fc2(register_module("fc2", torch::nn::Linear(32, 3))) {}
  at::Tensor forward(const at::Tensor& x) {
    return fc2->forward(drop->forward(torch::relu(bn->forward(fc1->forward(x)))));
  }
  torch::nn::Linear fc1;
  torch::nn::BatchNorm1d bn;
  torch::nn::Dropout drop;
  torch::nn::Linear fc2;
};
TORCH_MODULE(Net);

}  // namespace

int train_eval() {
  torch::manual_seed(6);
  Net net;
  torch::optim::AdamW opt(net->parameters(), torch::optim::AdamWOptions(5e-3));
  const at::Tensor x = torch::randn({64, 10});
  const at::Tensor labels = x.narrow(1, 0, 3).argmax(1);
  const at::Tensor x_val = torch::randn({32, 10});
  const at::Tensor labels_val = x_val.narrow(1, 0, 3).argmax(1);
  int step = 0;
  for (int epoch = 0; epoch < 5; ++epoch) {
    net->train();
    for (int b = 0; b < 64; b += 16, ++step) {
      opt.zero_grad();
      const at::Tensor loss = torch::cross_entropy_loss(net->forward(x.slice(0, b, b + 16)),
                                                        labels.slice(0, b, b + 16));
      loss.backward();
      opt.step();
      print_loss("loss", step, loss);
    }
    net->eval();
    torch::NoGradGuard no_grad;
    const at::Tensor logits = net->forward(x_val);
    print_loss("val_loss", epoch, torch::cross_entropy_loss(logits, labels_val));
    print_loss("val_acc", epoch, (logits.argmax(1) == labels_val).to(at::kFloat).mean());
  }
  std::vector<at::Tensor> state = net->parameters();
  for (const at::Tensor& b : net->buffers()) state.push_back(b);
  print_hash("params_and_buffers", state);
  return 0;
}

}  // namespace trainers
