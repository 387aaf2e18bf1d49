// SPDX-License-Identifier: BSD-3-Clause
// Replay on CUDA against eager CUDA backward: models built on the GPU (bitwise or <= 1e-5), the
// parity table captured on CPU and retargeted to the GPU (against eager CPU, TF32 off), CPU
// scalars that move and one that must stay, and CUDA-graph replay against plain replay over ten
// runs with new inputs. Every test skips without a CUDA device.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdio>
#include <string>

#include "ca/capture.h"
#include "ca/custom_function.h"
#include "ca/error.h"
#include "ca/executor.h"
#include "parity/parity_cases.h"

namespace ca {
namespace {

#define CA_REQUIRE_CUDA() \
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device"

const c10::Device kCuda(c10::kCUDA, 0);

std::vector<at::Tensor> fresh(const std::vector<at::Tensor>& inputs) {
  std::vector<at::Tensor> out;
  out.reserve(inputs.size());
  for (const at::Tensor& t : inputs) {
    out.push_back(t.detach().clone().requires_grad_(t.requires_grad()));
  }
  return out;
}

std::vector<at::Tensor> eager_grads(const at::Tensor& loss, const CaptureResult& cap,
                                    const std::vector<size_t>& targets) {
  std::vector<at::Tensor> leaves;
  leaves.reserve(targets.size());
  for (size_t k : targets) leaves.push_back(cap.inputs[k]);
  return torch::autograd::grad({loss}, leaves, {}, /*retain_graph=*/true, false, true);
}

struct CudaModel {
  const char* name;
  std::function<at::Tensor()> forward;  ///< a fresh forward on the GPU, returning the loss
};

std::vector<CudaModel> cuda_models() {
  namespace nn = torch::nn;
  torch::manual_seed(0);
  nn::Sequential mlp;
  for (int i = 0; i < 32; ++i) {
    mlp->push_back(nn::Linear(32, 32));
    mlp->push_back(nn::Tanh());
  }
  mlp->to(kCuda);
  nn::Sequential cnn(nn::Conv2d(nn::Conv2dOptions(3, 16, 3).padding(1)), nn::BatchNorm2d(16),
                     nn::ReLU(), nn::MaxPool2d(2), nn::Flatten(), nn::Linear(16 * 16 * 16, 10));
  cnn->to(kCuda);
  nn::TransformerEncoderLayer block(
      nn::TransformerEncoderLayerOptions(128, 4).dim_feedforward(256).dropout(0.0));
  block->to(kCuda);
  auto opts = torch::TensorOptions().device(kCuda);
  return {
      {"deep_narrow_mlp",
       [=]() mutable {
         return mlp->forward(torch::randn({8, 32}, opts)).pow(2).mean();
       }},
      {"cnn",
       [=]() mutable {
         return cnn->forward(torch::randn({4, 3, 32, 32}, opts)).pow(2).mean();
       }},
      {"transformer_block",
       [=]() mutable {
         return block->forward(torch::randn({16, 4, 128}, opts)).pow(2).mean();
       }},
      {"cpu_scalars",
       [=]() {
         auto x = torch::randn({64, 64}, opts.requires_grad(true));
         return (x * torch::tensor(2.0) / torch::tensor(3.0)).tanh().sum();
       }},
  };
}

double rel_error(const at::Tensor& got, const at::Tensor& want) {
  if (!got.defined() || !want.defined()) return got.defined() == want.defined() ? 0.0 : 1e30;
  const auto g = got.to(torch::kCPU, torch::kFloat64), w = want.to(torch::kCPU, torch::kFloat64);
  return (g - w).abs().max().item<double>() / std::max(w.abs().max().item<double>(), 1e-12);
}

TEST(CudaReplay, ModelsOnTheGpuMatchEagerCuda) {
  CA_REQUIRE_CUDA();
  for (CudaModel& m : cuda_models()) {
    at::Tensor loss = m.forward();
    const CaptureResult cap = capture({loss});
    ExecutorOptions options;
    options.device = kCuda;
    const Executor ex(cap.graph, options);
    const auto want = eager_grads(loss, cap, ex.grad_targets());
    const auto got = ex.run(fresh(cap.inputs));
    double worst = 0;
    size_t bitwise = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_TRUE(got[i].defined() && got[i].is_cuda()) << m.name << " grad " << i;
      worst = std::max(worst, rel_error(got[i], want[i]));
      bitwise += torch::equal(got[i], want[i]) ? 1 : 0;
    }
    EXPECT_LE(worst, 1e-5) << m.name;
    std::printf("[cuda parity] %s: %zu grads, %zu bitwise, max rel err %.3g\n", m.name, want.size(),
                bitwise, worst);
  }
}

TEST(CudaReplay, ParityTableRetargetedFromCpu) {
  CA_REQUIRE_CUDA();
  at::globalContext().setAllowTF32CuDNN(false);  // compare float32 with float32
  std::vector<testing::ParityCase> cases = testing::basic_cases();
  for (auto* more : {&testing::nn_cases, &testing::graph_cases, &testing::model_cases}) {
    for (auto& c : (*more)()) cases.push_back(std::move(c));
  }
  size_t passed = 0, refused = 0;
  for (const testing::ParityCase& c : cases) {
    torch::manual_seed(0);
    testing::Forward fwd = c.forward();
    const CaptureResult cap = capture(fwd.roots, fwd.grads);
    ExecutorOptions options;
    options.device = kCuda;
    const Executor ex(cap.graph, options);
    std::vector<at::Tensor> leaves;
    for (size_t k : ex.grad_targets()) leaves.push_back(cap.inputs[k]);
    std::vector<at::Tensor> grads = fwd.grads;
    if (grads.empty()) {
      for (const at::Tensor& r : fwd.roots) grads.push_back(torch::ones_like(r));
    }
    const auto want = torch::autograd::grad(fwd.roots, leaves, grads, true, false, true);
    std::vector<at::Tensor> got;
    try {
      got = ex.run(fresh(cap.inputs));
    } catch (const ExecutionError& e) {
      // A CPU capture may record a CPU-only kernel's backward (an LSTM's mkldnn, attention's
      // flash-for-CPU), which has no CUDA kernel (a CUDA capture records another node): the
      // run must name the node and the backend, and stop there.
      const std::string msg = e.what();
      const bool cpu_only = msg.find("(functional Mkldnn") != std::string::npos ||
                            msg.find("ForCpuBackward") != std::string::npos;
      EXPECT_TRUE(cpu_only && msg.find("'CUDA' backend") != std::string::npos)
          << c.name << ": " << msg;
      ++refused;
      continue;
    }
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, rel_error(got[i], want[i]));
    EXPECT_LE(worst, std::max(c.max_rel_error, 1e-4)) << c.name;
    passed += worst <= std::max(c.max_rel_error, 1e-4) ? 1 : 0;
  }
  std::printf(
      "[cuda retarget] %zu of %zu parity cases within tolerance on cuda, %zu refused "
      "(CPU-only backward kernels)\n",
      passed, cases.size(), refused);
}

/// y = x * s with a CPU scalar s read inside the custom function's body.
struct ScaleByCpuScalar : public torch::autograd::Function<ScaleByCpuScalar> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                            const at::Tensor& s) {
    ctx->save_for_backward({s});
    return x * s.item<double>();
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list g) {
    const at::Tensor s = ctx->get_saved_variables()[0];
    EXPECT_TRUE(s.is_cpu()) << "the custom function must see its scalar on CPU";
    return {g[0] * s.item<double>(), at::Tensor()};
  }
};
CA_REGISTER_FUNCTION(ScaleByCpuScalar);

TEST(CudaReplay, CpuScalarsMoveUnlessACustomFunctionReadsThem) {
  CA_REQUIRE_CUDA();
  auto x = torch::randn({16}, torch::TensorOptions().device(kCuda).requires_grad(true));
  at::Tensor loss = (x * torch::tensor(2.0) / torch::tensor(3.0)).sum();
  CaptureResult cap = capture({loss});
  ExecutorOptions options;
  options.device = kCuda;
  Executor moving(cap.graph, options);
  EXPECT_GE(moving.stats().cpu_scalars_moved, 2u);
  EXPECT_EQ(moving.stats().cpu_scalars_kept, 0u);
  auto got = moving.run(fresh(cap.inputs));
  EXPECT_LE(rel_error(got[0], eager_grads(loss, cap, moving.grad_targets())[0]), 1e-6);

  loss = ScaleByCpuScalar::apply(x, torch::tensor(3.0)).sum();
  cap = capture({loss});
  Executor keeping(cap.graph, options);
  EXPECT_EQ(keeping.stats().cpu_scalars_kept, 1u);
  got = keeping.run(fresh(cap.inputs));
  EXPECT_LE(rel_error(got[0], eager_grads(loss, cap, keeping.grad_targets())[0]), 1e-6);
  std::printf("[cuda scalars] builtin ops: %zu moved, %zu kept; custom function: %zu kept\n",
              moving.stats().cpu_scalars_moved, moving.stats().cpu_scalars_kept,
              keeping.stats().cpu_scalars_kept);
  options.cuda_graph = true;
  try {
    Executor refused(cap.graph, options);
    ADD_FAILURE() << "a kept CPU scalar must refuse cuda_graph";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CPU scalar"), std::string::npos) << e.what();
  }
}

TEST(CudaReplay, CudaGraphEqualsPlainReplayOverTenRuns) {
  CA_REQUIRE_CUDA();
  for (CudaModel& m : cuda_models()) {
    const CaptureResult first = capture({m.forward()});
    ExecutorOptions options;
    options.device = kCuda;
    const Executor plain(first.graph, options);
    options.cuda_graph = true;
    const Executor graphed(first.graph, options);
    size_t bitwise = 0, compared = 0;
    double worst = 0;
    for (int run = 0; run < 10; ++run) {
      const CaptureResult cap = capture({m.forward()});  // new input values, same graph
      ASSERT_EQ(cap.graph, first.graph) << m.name;
      const auto want = plain.run(fresh(cap.inputs));
      const auto got = graphed.run(fresh(cap.inputs));
      ASSERT_EQ(got.size(), want.size()) << m.name;
      for (size_t i = 0; i < want.size(); ++i) {
        worst = std::max(worst, rel_error(got[i], want[i]));
        bitwise += want[i].defined() && torch::equal(got[i], want[i]) ? 1 : 0;
        ++compared;
      }
    }
    EXPECT_LE(worst, 1e-6) << m.name;
    std::printf(
        "[cuda graph] %s: 10 runs, %zu of %zu grads bitwise equal to plain replay, max "
        "rel err %.3g\n",
        m.name, bitwise, compared, worst);
  }
}

}  // namespace
}  // namespace ca
