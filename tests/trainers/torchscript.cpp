// SPDX-License-Identifier: BSD-3-Clause
// A TorchScript model written in Python (make_torchscript.py, scripted and traced) trained from
// C++ with TorchScript's default settings: after two profiling runs the executor fuses the
// forward into DifferentiableGraphs, and each backward holds DifferentiableGraphBackward nodes.
#include <torch/script.h>

#include "trainers/programs.h"

namespace trainers {
namespace {

void train(const char* what, const std::string& path) {
  torch::jit::Module model = torch::jit::load(path);
  std::vector<at::Tensor> params;
  for (const at::Tensor& p : model.parameters()) params.push_back(p);
  torch::optim::Adam opt(params, torch::optim::AdamOptions(1e-2));
  torch::manual_seed(7);
  const at::Tensor x = torch::randn({32, 16});
  const at::Tensor y = torch::randn({32, 1});
  for (int step = 0; step < 15; ++step) {
    opt.zero_grad();
    const at::Tensor out = model.forward({x.narrow(0, (step % 4) * 8, 8)}).toTensor();
    const at::Tensor loss = torch::mse_loss(out, y.narrow(0, (step % 4) * 8, 8));
    loss.backward();
    opt.step();
    print_loss(what, step, loss);
  }
  print_hash(what, params);
}

}  // namespace

int torchscript() {
  train("scripted", CA_TORCHSCRIPT_SCRIPTED);
  train("traced", CA_TORCHSCRIPT_TRACED);
  return 0;
}

}  // namespace trainers
