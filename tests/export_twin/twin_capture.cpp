// SPDX-License-Identifier: BSD-3-Clause
// twin_capture: C++ capture of the models tests/python/test_export_twins.py exports from Python,
// built the same way in libtorch, so that the two graphs can be compared op by op.
//   twin_capture MODEL OUT.fb      MODEL: linear | mlp | conv | layer_norm | log_softmax
#include <torch/torch.h>

#include <cstdio>
#include <functional>
#include <map>
#include <string>

#include "ca/capture.h"
#include "ca/graph_io.h"

namespace {

namespace F = torch::nn::functional;

// Each returns the loss; shapes and layers match the Python twins exactly.
const std::map<std::string, std::function<at::Tensor()>> kModels = {
    {"linear",
     [] {
       return torch::nn::Linear(4, 3)->forward(torch::randn({8, 4})).sum();
     }},
    {"mlp",
     [] {
       torch::nn::Sequential m(torch::nn::Linear(4, 6), torch::nn::ReLU(), torch::nn::Linear(6, 2));
       return m->forward(torch::randn({8, 4})).sum();
     }},
    {"conv",
     [] {
       torch::nn::Conv2d conv(torch::nn::Conv2dOptions(3, 4, 3).padding(1));
       return torch::relu(conv->forward(torch::randn({2, 3, 8, 8}))).sum();
     }},
    {"layer_norm",
     [] {
       torch::nn::LayerNorm ln(torch::nn::LayerNormOptions({6}));
       return ln->forward(torch::randn({8, 6})).pow(2).sum();
     }},
    {"log_softmax",
     [] {
       torch::nn::Linear fc(5, 4);
       auto target = torch::tensor({0, 1, 2, 3, 0, 1, 2, 3});
       return F::nll_loss(torch::log_softmax(fc->forward(torch::randn({8, 5})), 1), target);
     }},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || kModels.count(argv[1]) == 0) {
    std::fprintf(stderr, "usage: twin_capture linear|mlp|conv|layer_norm|log_softmax OUT.fb\n");
    return 2;
  }
  try {
    torch::manual_seed(0);
    const at::Tensor loss = kModels.at(argv[1])();
    ca::save_graph(ca::capture({loss}).graph, argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "twin_capture: %s\n", e.what());
    return 1;
  }
  return 0;
}
