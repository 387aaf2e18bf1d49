// SPDX-License-Identifier: BSD-3-Clause
#include "bench_models.h"

#include <algorithm>
#include <cstdlib>

namespace ca::bench {
namespace {

namespace nn = torch::nn;

BenchModel deep_narrow_mlp() {
  nn::Sequential mlp;
  for (int i = 0; i < 32; ++i) {
    mlp->push_back(nn::Linear(32, 32));
    mlp->push_back(nn::Tanh());
  }
  auto x = torch::randn({8, 32});
  return {"deep_narrow_mlp", [mlp, x]() mutable { return mlp->forward(x).pow(2).mean(); },
          mlp->parameters()};
}

BenchModel cnn() {
  nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(3, 16, 3).padding(1)), nn::BatchNorm2d(16),
                     nn::ReLU(), nn::MaxPool2d(2),
                     nn::Conv2d(nn::Conv2dOptions(16, 32, 3).padding(1)), nn::BatchNorm2d(32),
                     nn::ReLU(), nn::MaxPool2d(2), nn::Flatten(), nn::Linear(32 * 8 * 8, 10));
  net->train();
  auto x = torch::randn({16, 3, 32, 32});
  auto y = torch::randint(0, 10, {16});
  return {"cnn",
          [net, x, y]() mutable { return nn::functional::cross_entropy(net->forward(x), y); },
          net->parameters()};
}

BenchModel transformer_block() {
  nn::TransformerEncoderLayer layer(
      nn::TransformerEncoderLayerOptions(128, 4).dim_feedforward(256).dropout(0.0));
  layer->train();
  auto x = torch::randn({32, 8, 128});
  return {"transformer_block", [layer, x]() mutable { return layer->forward(x).pow(2).mean(); },
          layer->parameters()};
}

}  // namespace

// The same MLP with a hook that only records on its middle activation: that activation's node
// runs as itself (an opaque call), the rest replays.
BenchModel deep_narrow_mlp_hooked() {
  std::vector<nn::Linear> layers;
  std::vector<at::Tensor> params;
  for (int i = 0; i < 32; ++i) {
    layers.emplace_back(32, 32);
    for (const at::Tensor& p : layers.back()->parameters()) params.push_back(p);
  }
  auto x = torch::randn({8, 32});
  auto seen = std::make_shared<double>(0);
  auto forward = [layers, x, seen]() mutable {
    at::Tensor h = x;
    for (size_t i = 0; i < layers.size(); ++i) {
      h = torch::tanh(layers[i]->forward(h));
      if (i == layers.size() / 2)
        h.register_hook([seen](const at::Tensor& g) { *seen += g.numel(); });
    }
    return h.pow(2).mean();
  };
  return {"deep_narrow_mlp_hooked", forward, params};
}

std::vector<BenchModel> bench_models() { return {deep_narrow_mlp(), cnn(), transformer_block()}; }

void register_per_model(const std::string& prefix,
                        void (*fn)(benchmark::State&, const BenchModel&)) {
  const char* threads = std::getenv("CA_BENCH_THREADS");
  at::set_num_threads(threads != nullptr ? std::max(1, std::atoi(threads)) : 1);
  for (const BenchModel& m : bench_models()) register_model(prefix, fn, m);
}

void register_model(const std::string& prefix, void (*fn)(benchmark::State&, const BenchModel&),
                    const BenchModel& model) {
  benchmark::RegisterBenchmark((prefix + "/" + model.name).c_str(), fn, model)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace ca::bench
