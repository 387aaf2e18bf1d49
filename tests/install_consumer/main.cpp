// SPDX-License-Identifier: BSD-3-Clause
// Captures a small backward, writes and reads it back as a file, replays it, and compares with
// eager autograd: exit 0 only when every gradient matches.
#include <ca/capture.h>
#include <ca/executor.h>
#include <ca/graph_io.h>
#include <torch/torch.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "consumer_bwd.fb";
  torch::manual_seed(0);
  auto w = torch::randn({4, 3}, torch::requires_grad());
  auto x = torch::randn({2, 3});
  auto loss = torch::linear(x, w).tanh().sum();
  ca::CaptureResult cap = ca::capture({loss});
  ca::save_graph(cap.graph, path);
  ca::Executor ex(ca::load_graph(path));
  std::vector<at::Tensor> inputs;
  for (const at::Tensor& t : cap.inputs) inputs.push_back(t.detach().clone());
  const std::vector<at::Tensor> got = ex.run(inputs);
  loss.backward();
  const bool ok = got.size() == 1 && torch::allclose(got[0], w.grad(), 1e-6, 1e-7);
  std::printf("consumer: %s\n", ok ? "gradients match eager" : "MISMATCH");
  return ok ? 0 : 1;
}
