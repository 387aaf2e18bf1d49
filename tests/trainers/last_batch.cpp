// SPDX-License-Identifier: BSD-3-Clause
// torch::data: a TensorDataset of 50 examples, a shuffling RandomSampler (it draws from the
// default generator every epoch) and batches of 16, so each epoch ends with a batch of 2.
#include "trainers/programs.h"

namespace trainers {

int last_batch() {
  torch::manual_seed(9);
  const at::Tensor inputs = torch::randn({50, 4});
  const at::Tensor targets = (inputs.narrow(1, 0, 1) > 0).to(at::kLong).squeeze(1);
  auto dataset = torch::data::datasets::TensorDataset(
                     {torch::cat({inputs, targets.unsqueeze(1).to(at::kFloat)}, 1)})
                     .map(torch::data::transforms::Stack<torch::data::TensorExample>());
  auto loader = torch::data::make_data_loader<torch::data::samplers::RandomSampler>(
      std::move(dataset), torch::data::DataLoaderOptions().batch_size(16));
  torch::nn::Sequential net(torch::nn::Linear(4, 8), torch::nn::ReLU(), torch::nn::Linear(8, 2));
  torch::optim::SGD opt(net->parameters(),
                        torch::optim::SGDOptions(0.1).nesterov(true).momentum(0.8));
  int step = 0;
  for (int epoch = 0; epoch < 4; ++epoch) {
    for (auto& batch : *loader) {
      const at::Tensor x = batch.data.narrow(1, 0, 4);
      const at::Tensor y = batch.data.select(1, 4).to(at::kLong);
      opt.zero_grad();
      const at::Tensor loss = torch::cross_entropy_loss(net->forward(x), y);
      loss.backward();
      opt.step();
      std::printf("batch %lld ", static_cast<long long>(x.size(0)));
      print_loss("loss", step++, loss);
    }
  }
  print_hash("params", net->parameters());
  return 0;
}

}  // namespace trainers
