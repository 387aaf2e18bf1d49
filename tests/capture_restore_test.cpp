// SPDX-License-Identifier: BSD-3-Clause
// A capture that fails, wherever it fails, hands the autograd graph back as it found it: every
// saved value it swapped for a meta proxy is back, so eager backward then gives eager's grads.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <optional>
#include <string>
#include <thread>

#include "ca/capture.h"
#include "ca/custom_function.h"
#include "ca/error.h"
#include "capture/capture_walk.h"
#include "test_util.h"
#include "unregistered_lin.h"

namespace ca {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

using Lin = test::UnregisteredLin;  // unregistered: capture refuses it

/// The same, registered: capture runs through it and records it.
struct RegisteredLin : public torch::autograd::Function<RegisteredLin> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& w) {
    ctx->save_for_backward({x, w});
    ctx->saved_data["scale"] = 0.5;
    return x.mm(w) * 0.5;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const double s = ctx->saved_data["scale"].toDouble();
    return {grads[0].mm(saved[1].t()) * s, saved[0].t().mm(grads[0]) * s};
  }
};
CA_REGISTER_FUNCTION(RegisteredLin);

// Parameters and a loss whose backward has a custom function, CopySlices, saved tensors of
// built-in nodes and two AccumulateGrads: every kind of compiler call capture records.
struct Net {
  at::Tensor w, b, x;
  static Net make() {
    torch::manual_seed(3);
    return {torch::randn({4, 4}, torch::requires_grad()), torch::randn({4}, torch::requires_grad()),
            torch::randn({3, 4})};
  }
  Net twin() const {
    return {w.detach().clone().requires_grad_(), b.detach().clone().requires_grad_(), x};
  }
  at::Tensor loss() const {
    at::Tensor y = RegisteredLin::apply(x, w) + b;
    y.narrow(1, 0, 2).mul_(2);  // in place on a view: CopySlices
    return (y.tanh() * y.exp()).sum();
  }
};

struct Injected : std::exception {
  const char* what() const noexcept override { return "injected"; }
};

TEST(CaptureRestore, ARefusedCustomFunctionLeavesItsSavedTensorsForEager) {
  torch::manual_seed(0);
  const at::Tensor x = torch::randn({3, 4});
  const at::Tensor w = torch::randn({4, 2}, torch::requires_grad());
  const at::Tensor w_twin = w.detach().clone().requires_grad_();
  Lin::apply(x, w_twin, std::nullopt).pow(2).sum().backward();
  const at::Tensor loss = Lin::apply(x, w, std::nullopt).pow(2).sum();
  EXPECT_THROW(capture({loss}), CaptureError);
  loss.backward();  // on meta proxies: "expected device cpu but got meta"
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().device().type(), c10::kCPU);
  EXPECT_TRUE(torch::equal(w.grad(), w_twin.grad()));
}

// Throws at the k-th point capture can fail, for every k until capture gets through; each time
// eager backward on the same graph must give the untouched twin's grads, bitwise.
void fail_at_every_point(bool c10_error) {
  const Net ref = Net::make();
  ref.loss().backward();
  size_t k = 0;
  for (;; ++k) {
    const Net net = ref.twin();
    const at::Tensor loss = net.loss();
    size_t seen = 0;
    std::string where;
    const detail::CaptureObserver observer = [&](const std::string& point) {
      if (seen++ != k) return;
      where = point;
      if (c10_error) TORCH_CHECK(false, "injected");
      throw Injected();
    };
    bool threw = false;
    try {
      auto walk = detail::walk_from_root(detail::make_root({loss}, {}), /*keys=*/false);
      detail::capture_walk(*walk, observer);
    } catch (const Injected&) {
      threw = true;
    } catch (const c10::Error&) {  // past the trace, nothing converts it
      threw = true;
    } catch (const CaptureError& e) {
      threw = true;
      EXPECT_TRUE(test::contains(e.what(), "injected"));
    }
    loss.backward();
    ASSERT_TRUE(net.w.grad().defined()) << where;
    EXPECT_TRUE(torch::equal(net.w.grad(), ref.w.grad())) << "failed at " << where;
    EXPECT_TRUE(torch::equal(net.b.grad(), ref.b.grad())) << "failed at " << where;
    if (!threw) break;
  }
  EXPECT_GE(k, 10u) << "expected calls of every kind: functional, copy_slices, accumulate_grad";
}

TEST(CaptureRestore, AnExceptionAtAnyPointLeavesTheGraphForEager) { fail_at_every_point(false); }

TEST(CaptureRestore, ATorchErrorAtAnyPointLeavesTheGraphForEager) { fail_at_every_point(true); }

// Restore tells the dead frames of the unwound node from live memory by this thread's stack: the
// same on a thread of the program's own.
TEST(CaptureRestore, AnExceptionOnAnotherThreadLeavesTheGraphForEager) {
  std::thread worker([] { fail_at_every_point(false); });
  worker.join();
}

}  // namespace
}  // namespace ca
