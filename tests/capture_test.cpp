// SPDX-License-Identifier: BSD-3-Clause
// Capture: what it records (op schemas, custom functions) and what it refuses, naming the node.
#include "ca/capture.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "ca/custom_function.h"
#include "ca/error.h"
#include "ca/executor.h"
#include "test_util.h"

namespace ca {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

/// y = 3x: a custom function no test registers.
struct Unregistered : public torch::autograd::Function<Unregistered> {
  static at::Tensor forward(AutogradContext*, const at::Tensor& x) { return x * 3; }
  static variable_list backward(AutogradContext*, variable_list grads) { return {grads[0] * 3}; }
};

/// y = x * k with k kept in saved_data: registered explicitly, not at static initialization.
struct TimesK : public torch::autograd::Function<TimesK> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, double k) {
    ctx->saved_data["k"] = k;
    return x * k;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {grads[0] * ctx->saved_data["k"].toDouble(), at::Tensor()};
  }
};

TEST(Capture, AnUnregisteredCustomFunctionIsRefusedNamingIt) {
  auto x = torch::randn({4}, torch::requires_grad());
  const std::string msg =
      test::error_of<CaptureError>([&] { capture({Unregistered::apply(x).sum()}); });
  EXPECT_TRUE(test::contains(msg, custom_function_name<Unregistered>())) << msg;
  EXPECT_TRUE(test::contains(msg, "CA_REGISTER_FUNCTION")) << msg;
}

TEST(Capture, AnExplicitlyRegisteredCustomFunctionReplaysLikeEager) {
  register_function<TimesK>();
  auto x = torch::randn({4}, torch::requires_grad());
  auto loss = TimesK::apply(x.exp(), 1.5).sum();
  CaptureResult cap = capture({loss});
  bool recorded = false;
  for (const OpSchema& s : cap.graph.op_schemas) {
    recorded = recorded || (s.op == custom_function_name<TimesK>() && s.is_custom_function);
  }
  EXPECT_TRUE(recorded);
  loss.backward();
  const at::Tensor want = x.grad().clone();
  x.mutable_grad().reset();
  Executor ex(cap.graph);
  const auto got = ex.run(cap.inputs);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(torch::allclose(got[0], want, 1e-6, 1e-7));
}

TEST(Capture, AParameterANodeAlsoSavesIsNamedAsAParameter) {
  auto w = torch::randn({3}, torch::requires_grad());
  auto x = torch::randn({3});
  CaptureResult cap = capture({(w * x).sum()});  // MulBackward0 saves w before AccumulateGrad
  size_t params = 0;
  for (size_t k = 0; k < cap.inputs.size(); ++k) {
    const bool is_w = cap.inputs[k].is_same(w);
    EXPECT_EQ(cap.graph.inputs[k].name.rfind("param.", 0) == 0, is_w) << cap.graph.inputs[k].name;
    params += is_w;
  }
  EXPECT_EQ(params, 1u);
}

TEST(Capture, RefusesNodesWithHooks) {
  auto w = torch::randn({3}, torch::requires_grad());
  auto y = w * 2;
  y.register_hook([](const at::Tensor& g) { return g * 2; });
  const std::string msg = test::error_of<CaptureError>([&] { capture({y.sum()}); });
  EXPECT_TRUE(test::contains(msg, "MulBackward1")) << msg;
  EXPECT_TRUE(test::contains(msg, "hook")) << msg;
}

TEST(Capture, NonScalarRootNeedsGrad) {
  auto w = torch::randn({3}, torch::requires_grad());
  EXPECT_THROW(capture({w * 2}), CaptureError);
  EXPECT_THROW(capture({torch::randn({3})}), CaptureError);  // nothing requires grad
}

TEST(Capture, LeavesTheAutogradGraphUsable) {
  auto w = torch::randn({4}, torch::requires_grad());
  auto loss = (w.exp() * w).sum();
  capture({loss});
  loss.backward();
  EXPECT_TRUE(torch::allclose(w.grad(), w.exp() * w + w.exp()));
}

}  // namespace
}  // namespace ca
