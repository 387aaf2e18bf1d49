// SPDX-License-Identifier: BSD-3-Clause
// The execution plan: concurrent runs on one Executor, validate_outputs elision, frames and
// observers. References are eager autograd's gradients (torch::autograd::grad).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <atomic>
#include <thread>

#include "ca/capture.h"
#include "ca/error.h"
#include "ca/executor.h"
#include "tensor_test_util.h"
#include "test_util.h"

namespace ca {
namespace {

using test::copies;

// A small MLP whose forward on `x` is captured; `params` are its leaves, `eager` the gradients
// eager autograd computes for them.
struct MlpCase {
  CaptureResult cap;
  std::vector<at::Tensor> eager;
};

MlpCase mlp_case(const std::vector<at::Tensor>& params, const at::Tensor& x) {
  at::Tensor h = torch::tanh(torch::linear(x, params[0], params[1]));
  at::Tensor loss = torch::linear(h, params[2]).pow(2).mean();
  std::vector<at::Tensor> eager = torch::autograd::grad({loss}, params, {}, true);
  return {capture({loss}), eager};
}

std::vector<at::Tensor> mlp_params() {
  torch::manual_seed(0);
  return {torch::randn({16, 8}, torch::requires_grad()), torch::randn({16}, torch::requires_grad()),
          torch::randn({4, 16}, torch::requires_grad())};
}

TEST(ExecutorPlan, FourThreadsReplayOneExecutorAgainstEager) {
  const std::vector<at::Tensor> params = mlp_params();
  constexpr int kThreads = 4;
  std::vector<MlpCase> cases;
  cases.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t)
    cases.push_back(mlp_case(params, torch::randn({5, 8}) * (t + 1)));
  for (const MlpCase& c : cases) ASSERT_EQ(c.cap.graph, cases[0].cap.graph);
  const Executor ex(cases[0].cap.graph);
  std::atomic<int> mismatches{0}, runs{0}, compared{0};
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const MlpCase& c = cases[static_cast<size_t>(t)];
      const std::vector<at::Tensor> inputs = copies(c.cap.inputs);  // own leaves, own .grad
      for (int r = 0; r < 20; ++r) {
        for (size_t k : ex.grad_targets()) inputs[k].mutable_grad().reset();
        const auto out = ex.run(inputs);
        std::vector<at::Tensor> grads;
        for (size_t j = 0; j < ex.grad_targets().size(); ++j) {
          grads.push_back(out.at(c.cap.graph.outputs.size() + j));
        }
        // grad_targets are graph inputs: map each back to its parameter through the capture.
        for (size_t j = 0; j < grads.size(); ++j) {
          const at::Tensor& leaf = c.cap.inputs[ex.grad_targets()[j]];
          for (size_t p = 0; p < params.size(); ++p) {
            if (!leaf.is_same(params[p])) continue;
            ++compared;
            if (!torch::allclose(grads[j], c.eager[p], 1e-5, 1e-6)) ++mismatches;
          }
        }
        ++runs;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(runs.load(), kThreads * 20);
  EXPECT_EQ(compared.load(), kThreads * 20 * 3);  // every parameter of every run
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(ExecutorPlan, ElidesProvenValidateOutputsAndStillMatchesEager) {
  const std::vector<at::Tensor> params = mlp_params();
  const MlpCase c = mlp_case(params, torch::randn({5, 8}));
  const Executor ex(c.cap.graph);
  const ExecutorStats& st = ex.stats();
  size_t validates = 0;
  for (const Node& n : c.cap.graph.nodes) validates += n.kind == NodeKind::kValidateOutputs;
  EXPECT_EQ(st.nodes, c.cap.graph.nodes.size());
  EXPECT_GT(st.validates_elided, 0u);
  EXPECT_LE(st.validates_elided, validates);
  EXPECT_EQ(st.plan_steps + st.validates_elided, st.nodes);
  const auto out = ex.run(copies(c.cap.inputs));
  size_t compared = 0;
  for (size_t j = 0; j < ex.grad_targets().size(); ++j) {
    const at::Tensor& leaf = c.cap.inputs[ex.grad_targets()[j]];
    for (size_t p = 0; p < params.size(); ++p) {
      if (!leaf.is_same(params[p])) continue;
      ++compared;
      EXPECT_TRUE(torch::allclose(out.at(c.cap.graph.outputs.size() + j), c.eager[p]));
    }
  }
  EXPECT_EQ(compared, params.size());
}

TEST(ExecutorPlan, BroadcastGradientKeepsItsValidateOutputs) {
  // b is broadcast in the forward: AddBackward0 hands it a [3, 4] grad that validate_outputs
  // must sum to [4]; that node cannot be elided and the result must still be eager's.
  torch::manual_seed(1);
  auto w = torch::randn({3, 4}, torch::requires_grad());
  auto b = torch::randn({4}, torch::requires_grad());
  auto loss = ((w * 2 + b).pow(2)).sum();
  const auto eager = torch::autograd::grad({loss}, {w, b}, {}, true);
  CaptureResult cap = capture({loss});
  const Executor ex(cap.graph);
  size_t validates = 0;
  for (const Node& n : cap.graph.nodes) validates += n.kind == NodeKind::kValidateOutputs;
  EXPECT_LT(ex.stats().validates_elided, validates);
  const auto out = ex.run(copies(cap.inputs));
  size_t compared = 0;
  for (size_t j = 0; j < ex.grad_targets().size(); ++j) {
    const at::Tensor& leaf = cap.inputs[ex.grad_targets()[j]];
    const at::Tensor& got = out.at(cap.graph.outputs.size() + j);
    for (size_t p = 0; p < 2; ++p) {
      if (!leaf.is_same(p == 0 ? w : b)) continue;
      ++compared;
      EXPECT_TRUE(torch::allclose(got, eager[p])) << got << eager[p];
    }
  }
  EXPECT_EQ(compared, 2u);
}

TEST(ExecutorPlan, FramesBelongToTheirExecutorAndKeepTheirInputs) {
  const MlpCase c = mlp_case(mlp_params(), torch::randn({5, 8}));
  const Executor a(c.cap.graph), b(c.cap.graph);
  Frame frame = a.make_frame();
  const auto inputs = copies(c.cap.inputs);
  EXPECT_TRUE(frame.bound_inputs().empty());
  a.run(frame, inputs);
  ASSERT_EQ(frame.bound_inputs().size(), inputs.size());
  EXPECT_TRUE(frame.bound_inputs()[0].is_same(inputs[0]));
  frame.release();
  EXPECT_TRUE(frame.bound_inputs().empty());
  const std::string msg = test::error_of<Error>([&] { b.run(frame, inputs); });
  EXPECT_TRUE(test::contains(msg, "another Executor"));
}

class CountingObserver : public RunObserver {
 public:
  void node_begin(size_t) override { ++nodes; }
  void op_begin(size_t) override { ++ops; }
  void op_end(size_t) override { ++op_ends; }
  void node_end(size_t node) override { max_node = std::max(max_node, node); }
  size_t nodes = 0, ops = 0, op_ends = 0, max_node = 0;
};

TEST(ExecutorPlan, ObserverSeesEveryStepAndEveryOp) {
  const MlpCase c = mlp_case(mlp_params(), torch::randn({5, 8}));
  const Executor ex(c.cap.graph);
  CountingObserver obs;
  ex.run(copies(c.cap.inputs), &obs);
  EXPECT_EQ(obs.nodes, ex.stats().plan_steps);
  EXPECT_EQ(obs.ops, obs.op_ends);
  EXPECT_GT(obs.ops, 0u);
  EXPECT_LT(obs.max_node, ex.stats().nodes);
}

}  // namespace
}  // namespace ca
