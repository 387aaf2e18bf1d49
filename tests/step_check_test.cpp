// SPDX-License-Identifier: BSD-3-Clause
// The steady-state check of CompiledBackward (a step checked directly against the graphs used
// last, without the full walk): a fact that changes after a checked hit is turned away by the
// check itself (a miss or an eager run, never a stale replay), with eager's gradients throughout.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ca/compiled_backward.h"
#include "compiled_backward_parity.h"
#include "test_util.h"

namespace ca {
namespace {

using test::expect_matches_eager;
using test::Params;
using test::params;

// A saved size (a SymInt the node keeps) that changes while every tensor keeps its shape. Each
// value runs twice: the second run is a checked hit, so the check of the graph used last is what
// turns the changed value away.
TEST(CompiledBackward, AChangedSavedSizeWithTheSameShapesMisses) {
  torch::manual_seed(5);
  CompiledBackward cb;
  expect_matches_eager(
      cb,
      [](const Params& p, int step) {
        const int64_t start = step / 2;
        return p[0].slice(0, start, start + 3).exp().sum();
      },
      params({{4}}), 4);
  EXPECT_EQ(cb.stats().misses, 2u);
  EXPECT_EQ(cb.stats().checked_hits, 2u);
  EXPECT_TRUE(test::contains(cb.stats().last_miss_reason, "specialized size"))
      << cb.stats().last_miss_reason;
}

// A hook appears on step 2, after a checked hit, and is gone on step 3: step 2 must not replay
// the graph cached without it (it captures another, the hooked node opaque), step 3 hits again.
TEST(CompiledBackward, AHookAddedBetweenStepsIsNotAHit) {
  torch::manual_seed(6);
  CompiledBackward cb;
  expect_matches_eager(
      cb,
      [](const Params& p, int step) {
        auto y = p[0] * 2;
        if (step == 2) y.register_hook([](const at::Tensor& g) { return g * 3; });
        return y.tanh().sum();
      },
      params({{5}}), 4);
  EXPECT_EQ(cb.stats().misses, 2u);
  EXPECT_EQ(cb.stats().eager_fallbacks, 0u);
  EXPECT_EQ(cb.stats().checked_hits, 2u);
  EXPECT_EQ(cb.stats().hits, 2u);
  EXPECT_EQ(cb.stats().opaque_calls, 1u);
  EXPECT_TRUE(test::contains(cb.stats().last_opaque_nodes, "tensor pre-hooks"))
      << cb.stats().last_opaque_nodes;
}

// A graph with an opaque node takes the check too: the activation is hooked for four steps (a
// miss, then three checked hits, each calling the live node), unhooked on step 4 (the check turns
// it away: the full walk captures the node this time), hooked again on step 5 (a checked hit).
TEST(CompiledBackward, AGraphWithAHookedNodeTakesTheSteadyStateCheck) {
  torch::manual_seed(8);
  CompiledBackward cb;
  expect_matches_eager(
      cb,
      [](const Params& p, int step) {
        auto y = p[0] * 2;
        if (step != 4) y.register_hook([](const at::Tensor& g) { return g * 3; });
        return y.tanh().sum();
      },
      params({{5}}), 6);
  EXPECT_EQ(cb.stats().misses, 2u);
  EXPECT_EQ(cb.stats().checked_hits, 4u);
  EXPECT_EQ(cb.stats().hits, 4u);
  EXPECT_EQ(cb.stats().opaque_calls, 5u);
  EXPECT_EQ(cb.stats().eager_fallbacks, 0u);
}

// A leaf's grad_dtype set after a checked hit (the dtype validate_outputs casts its gradient to,
// kept in its AccumulateGrad's input metadata, which upstream's key leaves out): the next step
// must miss and give the leaf a double gradient, as eager does; the step after hits again.
TEST(CompiledBackward, AGradDtypeSetBetweenStepsMisses) {
  torch::manual_seed(7);
  CompiledBackward cb;
  expect_matches_eager(
      cb,
      [](const Params& p, int step) {
        if (step == 2) {
          torch::autograd::impl::get_autograd_meta(p[0])->set_grad_dtype(at::kDouble, p[0]);
        }
        return (p[0] * 3).tanh().sum();
      },
      params({{5}}), 4);
  EXPECT_EQ(cb.stats().misses, 2u);
  EXPECT_EQ(cb.stats().checked_hits, 2u);
}

// A saved tensor written in place after the forward: eager refuses the backward, and so must a
// step whose graph is otherwise the cached one (no replay of the changed value).
TEST(CompiledBackward, ASavedTensorModifiedInPlaceFailsAsEagerDoes) {
  auto w = torch::randn({4}, torch::requires_grad());
  CompiledBackward cb;
  for (int step = 0; step < 3; ++step) {
    auto h = w * 1.5;
    auto loss = h.pow(2).sum();  // PowBackward0 saves h
    if (step == 2) {
      torch::NoGradGuard no_grad;
      h.add_(1.0);
    }
    if (step < 2) {
      cb.backward({loss});
      w.mutable_grad().reset();
      continue;
    }
    try {
      cb.backward({loss});
      ADD_FAILURE() << "a backward through a saved tensor modified in place ran";
    } catch (const c10::Error& e) {
      EXPECT_TRUE(test::contains(e.what(), "modified by an inplace operation")) << e.what();
    }
  }
  EXPECT_EQ(cb.stats().hits, 1u);
  EXPECT_EQ(cb.stats().checked_hits, 1u);  // step 1: the check took the graph; step 2 it did not
  EXPECT_EQ(cb.stats().eager_fallbacks, 1u);
}

}  // namespace
}  // namespace ca
