// SPDX-License-Identifier: BSD-3-Clause
// capture_example: the bundled example. Builds an MLP in libtorch, runs a training step's
// forward, captures its backward in pure C++, and writes what `replay` needs:
//   bwd.fb       the captured graph
//   batch.pt     its inputs (torch.save-compatible list)
//   expected.pt  eager autograd's gradients for the parameters, in replay order
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "ca/capture.h"
#include "ca/error.h"
#include "ca/graph_io.h"
#include "ca/tensor_io.h"

namespace {

struct Args {
  std::string out = ".";
  int depth = 3;
  int width = 64;
  int batch = 32;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::puts(
          "capture_example [--out DIR] [--depth N] [--width N] [--batch N]\n"
          "Captures an MLP's backward and writes DIR/bwd.fb, DIR/batch.pt, "
          "DIR/expected.pt.");
      std::exit(0);
    }
    if (i + 1 >= argc) throw ca::Error(flag + ": missing value");
    const std::string v = argv[++i];
    if (flag == "--out") {
      a.out = v;
    } else if (flag == "--depth" || flag == "--width" || flag == "--batch") {
      const int n = std::atoi(v.c_str());
      if (n < 1 || n > 4096) throw ca::Error(flag + ": expected 1..4096, got '" + v + "'");
      (flag == "--depth" ? a.depth : flag == "--width" ? a.width : a.batch) = n;
    } else {
      throw ca::Error("unknown argument '" + flag + "' (see --help)");
    }
  }
  return a;
}

torch::nn::Sequential make_mlp(const Args& a) {
  torch::nn::Sequential mlp;
  int in = 16;
  for (int i = 0; i < a.depth; ++i) {
    mlp->push_back(torch::nn::Linear(in, a.width));
    mlp->push_back(torch::nn::GELU());
    in = a.width;
  }
  mlp->push_back(torch::nn::Linear(in, 10));
  return mlp;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
    torch::manual_seed(0);
    auto mlp = make_mlp(a);
    auto x = torch::randn({a.batch, 16});
    auto target = torch::randint(0, 10, {a.batch});
    auto loss = torch::nn::functional::cross_entropy(mlp->forward(x), target);

    ca::CaptureResult cap = ca::capture({loss});
    std::vector<at::Tensor> params;
    for (size_t k : ca::grad_targets(cap.graph)) params.push_back(cap.inputs[k]);
    auto expected = torch::autograd::grad({loss}, params);

    std::vector<at::Tensor> batch;
    for (const at::Tensor& t : cap.inputs) batch.push_back(t.detach());
    std::filesystem::create_directories(a.out);
    ca::save_graph(cap.graph, a.out + "/bwd.fb");
    ca::save_tensors(batch, a.out + "/batch.pt");
    ca::save_tensors(expected, a.out + "/expected.pt");
    std::fprintf(stderr,
                 "captured MLP (depth %d, width %d, batch %d): %zu nodes, %zu inputs, "
                 "%zu parameter grads -> %s/{bwd.fb,batch.pt,expected.pt}\n",
                 a.depth, a.width, a.batch, cap.graph.nodes.size(), cap.graph.inputs.size(),
                 params.size(), a.out.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "capture_example: error: %s\n", e.what());
    return 2;
  }
}
