// SPDX-License-Identifier: BSD-3-Clause
// Capture: what it records (op schemas, custom functions) and what it refuses, naming the node.
#include "ca/capture.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "ca/compiled_backward.h"
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

/// sin(x) whose backward differentiates through the graph it built in forward and kept in
/// saved_data, by a reentrant autograd::grad, as hand-written checkpointing does.
struct SinByInnerGrad : public torch::autograd::Function<SinByInnerGrad> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x) {
    torch::AutoGradMode on(true);
    const at::Tensor xd = x.detach().requires_grad_();
    const at::Tensor y = xd.sin();
    ctx->saved_data["x"] = xd;
    ctx->saved_data["y"] = y;
    return y.detach();
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    torch::AutoGradMode on(true);
    const at::Tensor xd = ctx->saved_data["x"].toTensor();
    const at::Tensor y = ctx->saved_data["y"].toTensor();
    return {torch::autograd::grad({y}, {xd}, {grads[0]})[0]};
  }
};

TEST(Capture, ACustomFunctionKeepingAGradTensorInSavedDataIsRefusedAndLeftForEager) {
  register_function<SinByInnerGrad>();
  const at::Tensor w = torch::randn({5}, torch::requires_grad());
  for (const bool release : {false, true}) {
    const at::Tensor loss = SinByInnerGrad::apply(w * 2).sum();
    const std::string msg = test::error_of<CaptureError>(
        [&] { capture({loss}, {}, CaptureOptions{/*release_variables=*/release}); });
    EXPECT_TRUE(test::contains(msg, "saved_data[\"x\"], saved_data[\"y\"]")) << msg;
    EXPECT_TRUE(test::contains(msg, "reentrant")) << msg;
    w.mutable_grad().reset();
    loss.backward();  // nothing was released: eager still runs on the graph
    EXPECT_TRUE(torch::allclose(w.grad(), 2 * (2 * w.detach()).cos())) << "release " << release;
  }
}

TEST(Capture, TheTrainerApiReplaysThatFunctionInProcess) {
  register_function<SinByInnerGrad>();
  const at::Tensor w = torch::randn({5}, torch::requires_grad());
  CompiledBackward cb;
  for (int step = 0; step < 2; ++step) {
    w.mutable_grad().reset();
    cb.backward({SinByInnerGrad::apply(w * 2).sum()});
    EXPECT_TRUE(torch::allclose(w.grad(), 2 * (2 * w.detach()).cos())) << "step " << step;
  }
  EXPECT_EQ(cb.stats().hits, 1u);
  EXPECT_EQ(cb.stats().eager_fallbacks, 0u);
}

/// sin(x) whose backward builds a graph of its own with grad mode on and differentiates it: user
/// code that needs autograd's dispatch keys inside a replay that otherwise runs below them.
struct SinByGradInBackward : public torch::autograd::Function<SinByGradInBackward> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x) {
    ctx->save_for_backward({x});
    return x.sin();
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    torch::AutoGradMode on(true);
    const at::Tensor xd = ctx->get_saved_variables()[0].detach().requires_grad_();
    return {torch::autograd::grad({xd.sin()}, {xd}, {grads[0]})[0]};
  }
};

TEST(Capture, ACustomFunctionThatDifferentiatesInItsBackwardReplays) {
  register_function<SinByGradInBackward>();
  const at::Tensor w = torch::randn({5}, torch::requires_grad());
  CompiledBackwardOptions options;
  options.strict = true;  // a refused capture would pass by running eagerly
  CompiledBackward cb(options);
  for (int step = 0; step < 2; ++step) {
    w.mutable_grad().reset();
    cb.backward({SinByGradInBackward::apply(w * 2).sum()});
    EXPECT_TRUE(torch::allclose(w.grad(), 2 * (2 * w.detach()).cos())) << "step " << step;
  }
  EXPECT_EQ(cb.stats().hits, 1u);
}

}  // namespace
}  // namespace ca
