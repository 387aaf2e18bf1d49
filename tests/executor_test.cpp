// SPDX-License-Identifier: BSD-3-Clause
// The executor refuses bad inputs with errors that name the problem, and names a failing node.
// (Graphs refused at load are op_binding_test's.)
#include "ca/executor.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "ca/capture.h"
#include "ca/error.h"
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

}  // namespace
}  // namespace ca
