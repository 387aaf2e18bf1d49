// SPDX-License-Identifier: BSD-3-Clause
// Writes the fuzzers' seed corpora from graphs and batches the project itself produces: a few
// captured backward graphs (every node kind capture emits) and a hand-built aten graph, as bare
// FlatBuffer payloads (the graph targets seal their input), and each capture's batch as .pt.
//   make_seeds OUT_DIR   ->  OUT_DIR/graph/*.fb, OUT_DIR/tensors/*.pt
#include <torch/torch.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include "ca/capture.h"
#include "ca/graph_io.h"
#include "ca/tensor_io.h"
#include "ca/version.h"

namespace {

constexpr size_t kTrailerBytes = 16;

void write(const std::filesystem::path& path, const std::vector<uint8_t>& bytes, size_t drop) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size() - drop));
}

ca::CaptureResult mlp() {
  torch::nn::Sequential m(torch::nn::Linear(4, 6), torch::nn::Tanh(), torch::nn::Linear(6, 2));
  return ca::capture({m->forward(torch::randn({3, 4})).pow(2).sum()});
}

ca::CaptureResult conv() {
  torch::nn::Conv2d c(torch::nn::Conv2dOptions(2, 3, 3).padding(1));
  torch::nn::BatchNorm2d bn(3);
  at::Tensor y = torch::relu(bn->forward(c->forward(torch::randn({2, 2, 5, 5}))));
  return ca::capture({torch::max_pool2d(y, 2).mean()});
}

ca::CaptureResult in_place_view() {  // CopySlices: copy_slices prologue/epilogue
  at::Tensor a = torch::randn({4, 3}, torch::requires_grad());
  at::Tensor b = torch::randn({2, 3}, torch::requires_grad());
  at::Tensor x = a.clone();
  x.narrow(0, 1, 2).mul_(b);
  return ca::capture({x.exp().sum()});
}

ca::CaptureResult split_softmax() {
  at::Tensor a = torch::randn({6, 4}, torch::requires_grad());
  auto parts = a.split_with_sizes({2, 4});
  at::Tensor y = torch::cat({parts[1].softmax(1), parts[0].t().mm(parts[0])}, 0);
  return ca::capture({y.select(1, 1).sum() + y.std()});
}

// Ops whose backward the runtime checks per call: saved indices (embedding, max pool), CTC
// lengths and targets, grad ranks (repeat, unfold, amax).
ca::CaptureResult checked_ops() {
  at::Tensor w = torch::randn({6, 3}, torch::requires_grad());
  at::Tensor e = torch::embedding(w, torch::tensor({{0, 5, 1}, {2, 2, 4}}));
  at::Tensor y = e.repeat({1, 2, 1}).unfold(1, 2, 2);  // [2, 3, 3, 2]
  at::Tensor pooled = std::get<0>(torch::max_pool2d_with_indices(y, {2, 1}));
  at::Tensor lp = y.amax({3}).permute({1, 0, 2}).log_softmax(2);  // (time, batch, class)
  at::Tensor ctc = torch::ctc_loss(lp, torch::tensor({{1, 2}, {2, 0}}), {3, 3}, {2, 1});
  return ca::capture({ctc + pooled.sum()});
}

// aten::mul.Tensor then aten::view.default: the aten node kind with a geometry from the file.
ca::Graph aten_graph() {
  ca::Graph g;
  g.torch_version = ca::runtime_torch_version();
  for (const char* name : {"a", "b"}) {
    ca::GraphInput in;
    in.name = name;
    in.meta.sizes = {2, 3};
    g.inputs.push_back(in);
  }
  ca::Node mul;
  mul.kind = ca::NodeKind::kAten;
  mul.op = g.intern("aten::mul");
  mul.overload = g.intern("Tensor");
  mul.inputs = g.add_ids({0, 1});
  mul.args = g.arg_pool.append({ca::Arg::tensor(0), ca::Arg::tensor(1)});
  mul.outputs = g.add_ids({2});
  ca::Node view = mul;
  view.op = g.intern("aten::view");
  view.overload = g.intern("");
  view.inputs = g.add_ids({2});
  ca::ArgType sym{ca::ArgType::Kind::kSymInt, {}};
  view.args = g.arg_pool.append(
      {ca::Arg::tensor(2), ca::Arg::list(sym, {ca::Arg::integer(3), ca::Arg::integer(2)})});
  view.outputs = g.add_ids({3});
  g.nodes = {mul, view};
  g.num_values = 4;
  g.outputs = {3};
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds OUT_DIR\n");
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out / "graph");
  std::filesystem::create_directories(out / "tensors");
  torch::manual_seed(0);
  const std::vector<std::pair<const char*, std::function<ca::CaptureResult()>>> models = {
      {"mlp", mlp},
      {"conv", conv},
      {"in_place_view", in_place_view},
      {"split_softmax", split_softmax},
      {"checked_ops", checked_ops}};
  for (const auto& [name, make] : models) {
    const ca::CaptureResult cap = make();
    write(out / "graph" / (std::string(name) + ".fb"), ca::graph_to_bytes(cap.graph),
          kTrailerBytes);
    write(out / "tensors" / (std::string(name) + ".pt"), ca::tensors_to_bytes(cap.inputs), 0);
  }
  write(out / "graph" / "aten.fb", ca::graph_to_bytes(aten_graph()), kTrailerBytes);
  write(out / "tensors" / "small.pt",
        ca::tensors_to_bytes({torch::arange(6).reshape({2, 3}), torch::randn({3}).t()}), 0);
  std::printf("seeds written to %s\n", out.c_str());
  return 0;
}
