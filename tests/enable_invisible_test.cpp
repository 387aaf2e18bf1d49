// SPDX-License-Identifier: BSD-3-Clause
// ca::enable() is invisible: a program observes what eager backward gives it, whatever its
// backward contains: the same grads, random stream, autograd graph afterwards and errors.
#include <c10/util/Exception.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "ca/compiled_backward.h"
#include "test_util.h"
#include "unregistered_lin.h"

namespace ca {
namespace {

using Lin = test::UnregisteredLin;  // unregistered: ca::capture() refuses it, a replay calls it

struct Params {
  at::Tensor w = torch::randn({4, 2}, torch::requires_grad());
  at::Tensor b = torch::randn({2}, torch::requires_grad());
  Params twin() const {
    Params p;
    p.w = w.detach().clone().requires_grad_();
    p.b = b.detach().clone().requires_grad_();
    return p;
  }
  at::Tensor loss(const at::Tensor& x) const { return Lin::apply(x, w, b).tanh().sum(); }
};

// Its node runs as itself (opaque), the rest of the backward replays.
TEST(EnableInvisible, AnUnregisteredCustomFunctionRunsAsItselfAndTheRestReplays) {
  torch::manual_seed(0);
  const Params mine;
  const Params eager = mine.twin();
  const at::Tensor x = torch::randn({3, 4});
  for (int step = 0; step < 2; ++step) eager.loss(x).backward();
  {
    EnableGuard on;
    for (int step = 0; step < 2; ++step) mine.loss(x).backward();
    EXPECT_EQ(enabled_stats().eager_fallbacks, 0u);
    EXPECT_EQ(enabled_stats().hits + enabled_stats().misses, 2u);
    EXPECT_EQ(enabled_stats().opaque_calls, 2u);
    EXPECT_TRUE(test::contains(enabled_stats().last_opaque_nodes, "not registered"));
  }
  EXPECT_TRUE(torch::equal(mine.w.grad(), eager.w.grad()));
  EXPECT_TRUE(torch::equal(mine.b.grad(), eager.b.grad()));
}

TEST(EnableInvisible, ALiveNodeUnderRetainGraphKeepsItsStateForASecondBackward) {
  torch::manual_seed(1);
  const Params mine;
  const Params eager = mine.twin();
  const at::Tensor x = torch::randn({3, 4});
  const at::Tensor eager_loss = eager.loss(x);
  eager_loss.backward({}, /*retain_graph=*/true);
  eager_loss.backward();
  EnableGuard on;
  const at::Tensor loss = mine.loss(x);
  loss.backward({}, /*retain_graph=*/true);
  loss.backward();
  EXPECT_TRUE(torch::equal(mine.w.grad(), eager.w.grad()));
  EXPECT_EQ(enabled_stats().opaque_calls, 2u);  // both replayed around the live node
  EXPECT_EQ(enabled_stats().eager_fallbacks, 0u);
  // and a third, through the graph the second freed: torch's own error, as eager gives it
  const std::string eager_error = test::error_of<c10::Error>([&] { eager_loss.backward(); });
  const std::string mine_error = test::error_of<c10::Error>([&] { loss.backward(); });
  EXPECT_EQ(mine_error.substr(0, mine_error.find('\n')),
            eager_error.substr(0, eager_error.find('\n')));
}

TEST(EnableInvisible, ABackwardThroughAFreedGraphGivesTorchsError) {
  torch::manual_seed(2);
  const at::Tensor w = torch::randn({3}, torch::requires_grad());
  const at::Tensor eager_loss = (w.exp() * w).sum();
  eager_loss.backward();
  const std::string eager_error = test::error_of<c10::Error>([&] { eager_loss.backward(); });
  EnableGuard on;
  const at::Tensor loss = (w.exp() * w).sum();
  loss.backward();
  const std::string mine_error = test::error_of<c10::Error>([&] { loss.backward(); });
  EXPECT_TRUE(test::contains(mine_error, "Trying to backward through the graph a second time"));
  EXPECT_EQ(mine_error.substr(0, mine_error.find('\n')),
            eager_error.substr(0, eager_error.find('\n')));
}

// Seeds, draws, runs three backwards (dropout in each forward), draws again: the numbers and the
// grad a program sees.
at::Tensor stream_and_grad(bool enabled) {
  torch::manual_seed(11);
  const at::Tensor w = torch::randn({4}, torch::requires_grad());
  torch::randn({1});  // a cached normal sample stays in the generator
  if (enabled) enable();
  for (int step = 0; step < 3; ++step) {
    (torch::dropout(w * 2, 0.5, /*train=*/true) * w).sum().backward();
  }
  if (enabled) disable();
  return torch::cat({torch::randn({3}), w.grad()});
}

// Exits 0 when ca::enable() and its backwards (harvest, capture, replay) leave the random stream
// as eager backward does. In a fresh process: the registry is harvested at the first backward.
[[noreturn]] void exit_with_stream_check() {
  const at::Tensor want = stream_and_grad(false);  // eager backward never touches the registry
  const at::Tensor got = stream_and_grad(true);
  if (enabled_stats().hits == 0) std::exit(2);
  std::exit(torch::equal(got, want) ? 0 : 1);
}

TEST(EnableInvisible, EnableAndItsBackwardsDrawNoRandomNumbers) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(exit_with_stream_check(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace ca
