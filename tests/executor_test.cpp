// SPDX-License-Identifier: BSD-3-Clause
// The executor refuses bad inputs with errors that name the problem, and names a failing node.
// (Graphs refused at load are op_binding_test's.)
#include "ca/executor.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "ca/capture.h"
#include "ca/error.h"
#include "ca/graph_io.h"
#include "sample_graphs.h"
#include "tensor_test_util.h"
#include "test_util.h"

namespace ca {
namespace {

CaptureResult small_capture() {
  torch::manual_seed(0);
  auto w = torch::randn({3, 4}, torch::requires_grad());
  auto x = torch::randn({2, 4});
  return capture({torch::linear(x, w).sum()});
}

using test::copies;

TEST(Executor, WrongInputCountNamesBoth) {
  CaptureResult cap = small_capture();
  Executor ex(cap.graph);
  auto inputs = copies(cap.inputs);
  inputs.pop_back();
  const std::string msg = test::error_of<InputError>([&] { ex.run(inputs); });
  EXPECT_NE(msg.find("expected " + std::to_string(cap.inputs.size()) + " inputs, got " +
                     std::to_string(inputs.size())),
            std::string::npos)
      << msg;
}

TEST(Executor, WrongDtypeAndShapeNameTheInput) {
  CaptureResult cap = small_capture();
  Executor ex(cap.graph);
  auto inputs = copies(cap.inputs);
  const size_t k = inputs.size() - 1;
  inputs[k] = inputs[k].to(torch::kDouble);
  std::string msg = test::error_of<InputError>([&] { ex.run(inputs); });
  EXPECT_NE(msg.find("input " + std::to_string(k) + " (" + cap.graph.inputs[k].name + ")"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("Double"), std::string::npos) << msg;
  inputs = copies(cap.inputs);
  inputs[0] = torch::zeros({7});
  msg = test::error_of<InputError>([&] { ex.run(inputs); });
  EXPECT_NE(msg.find("[7]"), std::string::npos) << msg;
}

TEST(Executor, WrongDeviceIsRefused) {
  CaptureResult cap = small_capture();
  Executor ex(cap.graph);
  auto inputs = copies(cap.inputs);
  inputs[0] = inputs[0].to(torch::kMeta);
  EXPECT_THROW(ex.run(inputs), InputError);
}

TEST(Executor, AFailingNodeIsNamedWithItsInputs) {
  // Saved sizes that no longer fit the tensors: the node's math fails at replay.
  CaptureResult cap = small_capture();
  bool changed = false;
  for (size_t i = 0; i < cap.graph.nodes.size() && !changed; ++i) {
    if (cap.graph.nodes[i].kind != NodeKind::kFunctional) continue;
    test::edit_args(cap.graph, i, [&](std::vector<Arg>& args) {
      for (Arg& a : args) {
        if (a.kind != Arg::Kind::kList || a.items.empty() || a.items[0].kind != Arg::Kind::kInt ||
            changed) {
          continue;
        }
        for (Arg& item : a.items) item.i = 7;
        changed = true;
      }
    });
  }
  ASSERT_TRUE(changed);
  Executor ex(cap.graph);
  const std::string msg = test::error_of<ExecutionError>([&] { ex.run(copies(cap.inputs)); });
  EXPECT_NE(msg.find("nodes["), std::string::npos) << msg;
  EXPECT_NE(msg.find("on inputs (%"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Float["), std::string::npos) << msg;
}

TEST(Executor, ReplayMatchesEagerAndAccumulatesLikeBackward) {
  CaptureResult cap = small_capture();
  Executor ex(cap.graph);
  auto inputs = copies(cap.inputs);
  const at::Tensor first = ex.run(inputs).at(0).clone();
  const auto second = ex.run(inputs);  // .grad accumulates, as two backward() calls would
  ASSERT_EQ(ex.grad_targets().size(), 1u);
  EXPECT_TRUE(torch::allclose(second[0], first * 2));
}

// x -> opaque "LiveNode" -> y: a graph of the trainer API's kind, made by hand.
Graph opaque_graph() {
  Graph g = test::tiny_graph();
  g.nodes.push_back(g.make_node(NodeKind::kOpaque, "LiveNode", {0}, {}, {1}));
  g.num_values = 2;
  g.outputs = {1};
  return g;
}

// Calls each opaque node as doubling its one grad, and counts the calls.
struct Doubling : OpaqueCalls {
  std::vector<size_t> calls;
  std::vector<at::Tensor> call(size_t index, std::vector<at::Tensor>&& grads) override {
    calls.push_back(index);
    return {grads.at(0) * 2};
  }
};

TEST(Executor, OpaqueNodesLoadOnlyWhenAskedAndRunOnlyWithTheirCalls) {
  const std::string refused = test::error_of<FormatError>([] { Executor ex(opaque_graph()); });
  EXPECT_TRUE(test::contains(refused, "nodes[0] (opaque LiveNode)")) << refused;
  EXPECT_TRUE(test::contains(refused, "ExecutorOptions::opaque_nodes")) << refused;

  ExecutorOptions options;
  options.opaque_nodes = true;
  const Executor ex(opaque_graph(), options);
  const at::Tensor x = torch::arange(4, torch::kFloat);
  const std::string no_calls = test::error_of<Error>([&] { ex.run({x}); });
  EXPECT_TRUE(test::contains(no_calls, "1 opaque node(s)")) << no_calls;
  Doubling doubling;
  const std::vector<at::Tensor> out = ex.run_consuming({x.clone()}, nullptr, &doubling);
  EXPECT_EQ(doubling.calls, std::vector<size_t>{0});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(torch::equal(out[0], x * 2));
}

TEST(Executor, AGraphWithOpaqueNodesCannotBeWritten) {
  const std::string msg = test::error_of<Error>([] { graph_to_bytes(opaque_graph()); });
  EXPECT_TRUE(test::contains(msg, "nodes[0] (opaque LiveNode)")) << msg;
  EXPECT_TRUE(test::contains(msg, "a file cannot hold")) << msg;
}

}  // namespace
}  // namespace ca
