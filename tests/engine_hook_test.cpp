// SPDX-License-Identifier: BSD-3-Clause
// ca::enable(): plain loss.backward() goes through the process-wide CompiledBackward and gives
// eager's gradients; what it cannot replay runs eagerly; disable() restores the eager engine.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ca/compiled_backward.h"
#include "test_util.h"

namespace ca {
namespace {

struct Mlp {
  at::Tensor w1 = torch::randn({8, 4}, torch::requires_grad());
  at::Tensor w2 = torch::randn({1, 8}, torch::requires_grad());
  at::Tensor loss(const at::Tensor& x) const {
    return torch::linear(torch::linear(x, w1).relu(), w2).sum();
  }
  Mlp copy() const {
    Mlp m;
    m.w1 = w1.detach().clone().requires_grad_();
    m.w2 = w2.detach().clone().requires_grad_();
    return m;
  }
};

TEST(EngineHook, PlainBackwardReplaysAndMatchesEager) {
  torch::manual_seed(0);
  Mlp eager;
  Mlp mine = eager.copy();
  const at::Tensor x = torch::randn({5, 4});
  for (int step = 0; step < 3; ++step) eager.loss(x).backward();
  {
    EnableGuard on;
    for (int step = 0; step < 3; ++step) mine.loss(x).backward();
    EXPECT_EQ(enabled_stats().misses, 2u);  // no .grad yet, then with one
    EXPECT_EQ(enabled_stats().hits, 1u);
  }
  EXPECT_TRUE(torch::allclose(mine.w1.grad(), eager.w1.grad(), 1e-6, 1e-7));
  EXPECT_TRUE(torch::allclose(mine.w2.grad(), eager.w2.grad(), 1e-6, 1e-7));
  EXPECT_EQ(enabled_stats().hits, 1u);  // still readable after disable()
}

TEST(EngineHook, CreateGraphRunsEagerlyAndIsCounted) {
  torch::manual_seed(1);
  auto w = torch::randn({3}, torch::requires_grad());
  EnableGuard on;
  auto first = torch::autograd::grad({(w * w * w).sum()}, {w}, {}, true, /*create_graph=*/true);
  EXPECT_EQ(enabled_stats().eager_fallbacks, 1u);
  EXPECT_EQ(enabled_stats().last_fallback_reason, "create_graph=true");
  auto second = torch::autograd::grad({first[0].sum()}, {w});  // the graph of a backward
  EXPECT_TRUE(torch::allclose(second[0], 6 * w));
  EXPECT_EQ(enabled_stats().misses, 1u);
}

TEST(EngineHook, DisableRestoresTheEagerEngine) {
  auto w = torch::randn({3}, torch::requires_grad());
  enable();
  disable();
  (w * 2).sum().backward();
  EXPECT_TRUE(torch::allclose(w.grad(), torch::full({3}, 2.0)));
  EXPECT_EQ(enabled_stats().misses, 0u);
}

}  // namespace
}  // namespace ca
