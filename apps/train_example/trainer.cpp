// SPDX-License-Identifier: BSD-3-Clause
#include "trainer.h"

#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <chrono>
#include <optional>
#include <set>
#include <utility>

#include "ca/custom_function.h"

namespace train {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The trainer's own custom C++ autograd function: logits scaled by a constant kept in saved_data
// (part of the cache key), registered with ca-replay so that its graphs replay.
struct ScaleLogits : torch::autograd::Function<ScaleLogits> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, double scale) {
    ctx->saved_data["scale"] = scale;
    return x * scale;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {grads[0] * ctx->saved_data["scale"].toDouble(), at::Tensor()};
  }
};
CA_REGISTER_FUNCTION(ScaleLogits);

// A fixed synthetic data set: 3x16x16 images, 10 classes.
struct Data {
  at::Tensor images, labels;
  explicit Data(int n) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(1);
    images = torch::randn({n, 3, 16, 16}, gen);
    labels = torch::randint(0, 10, {n}, gen);
  }
};

std::vector<at::Tensor> snapshot(const torch::jit::Module& model) {
  std::vector<at::Tensor> out;
  for (const at::Tensor& p : model.parameters()) out.push_back(p.detach().clone());
  for (const at::Tensor& b : model.buffers()) out.push_back(b.detach().clone());
  return out;
}

}  // namespace

const char* mode_name(Mode mode) {
  switch (mode) {
    case Mode::kEager:
      return "eager";
    case Mode::kCompiled:
      return "compiled";
    case Mode::kEnabled:
      return "enabled";
  }
  return "?";
}

Result train(const Config& config, Mode mode) {
  // The plain interpreter: the profiling executor would fuse ops into DifferentiableGraph nodes,
  // which are not built-in autograd nodes.
  torch::jit::setGraphExecutorOptimize(false);
  torch::jit::Module model = torch::jit::load(config.model_path);
  model.train();
  std::vector<at::Tensor> params;
  for (const at::Tensor& p : model.parameters()) params.push_back(p);
  torch::optim::SGD sgd(params, torch::optim::SGDOptions(config.lr).momentum(0.9));
  const Data data(config.dataset);
  const int per_epoch = (config.dataset + config.batch - 1) / config.batch;

  ca::CompiledBackward compiled;
  std::optional<ca::EnableGuard> enabled;
  if (mode == Mode::kEnabled) enabled.emplace();
  std::set<std::pair<int64_t, bool>> graphs;
  const int warmup = config.warmup < config.steps ? config.warmup : 0;
  auto start = std::chrono::steady_clock::now();
  for (int step = 0; step < config.steps; ++step) {
    if (step == warmup) start = std::chrono::steady_clock::now();
    const int64_t first = int64_t{step % per_epoch} * config.batch;
    const int64_t size = std::min<int64_t>(config.batch, config.dataset - first);
    const bool aux = config.aux_every > 0 && step % config.aux_every == 0;
    graphs.emplace(size, aux);
    sgd.zero_grad();  // sets .grad to none, so every step's graph starts without one
    const at::Tensor out = model.forward({data.images.narrow(0, first, size), aux}).toTensor();
    const at::Tensor loss =
        torch::cross_entropy_loss(ScaleLogits::apply(out, 0.5), data.labels.narrow(0, first, size));
    if (mode == Mode::kCompiled) {
      compiled.backward({loss});
    } else {
      loss.backward();
    }
    sgd.step();
  }
  Result result;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.timed_steps = config.steps - warmup;
  result.stats = mode == Mode::kEnabled ? ca::enabled_stats() : compiled.stats();
  result.graphs = graphs.size();
  result.state = snapshot(model);
  return result;
}

}  // namespace train
