// SPDX-License-Identifier: BSD-3-Clause
// CompiledBackward::grad() against torch::autograd::grad, retain_grad() on non-leaf tensors
// against eager backward, and what the trainer API cannot replay (custom functions that mark
// tensors dirty) or must not lock itself on (a backward called from inside a replayed node).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "ca/compiled_backward.h"
#include "ca/custom_function.h"
#include "ca/error.h"
#include "test_util.h"

namespace ca {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct Net {
  at::Tensor w1 = torch::randn({8, 4}, torch::requires_grad());
  at::Tensor w2 = torch::randn({1, 8}, torch::requires_grad());
  at::Tensor x = torch::randn({5, 4});
  at::Tensor hidden;  ///< the last forward's hidden activation (a non-leaf)

  at::Tensor loss(bool retain_hidden = false) {
    hidden = torch::linear(x, w1).tanh();
    if (retain_hidden) hidden.retain_grad();
    return torch::linear(hidden, w2).pow(2).sum();
  }
};

TEST(CompiledGrad, MatchesAutogradGradForLeavesAndNonLeavesAndWritesNoGrad) {
  torch::manual_seed(0);
  Net net;
  CompiledBackward cb;
  for (int step = 0; step < 3; ++step) {
    const at::Tensor loss = net.loss();
    const auto mine = cb.grad({loss}, {net.w1, net.hidden});
    const at::Tensor eager_loss = net.loss();
    const auto theirs = torch::autograd::grad({eager_loss}, {net.w1, net.hidden});
    ASSERT_EQ(mine.size(), 2u);
    EXPECT_TRUE(torch::equal(mine[0], theirs[0])) << "step " << step;
    EXPECT_TRUE(torch::equal(mine[1], theirs[1])) << "step " << step;
  }
  EXPECT_FALSE(net.w1.grad().defined());
  EXPECT_FALSE(net.w2.grad().defined());
  EXPECT_EQ(cb.stats().misses, 1u);
  EXPECT_EQ(cb.stats().hits, 2u);
}

TEST(CompiledGrad, OtherInputsAreAnotherGraph) {
  torch::manual_seed(1);
  Net net;
  CompiledBackward cb;
  const auto g1 = cb.grad({net.loss()}, {net.w1});
  const auto g2 = cb.grad({net.loss()}, {net.w2});
  EXPECT_TRUE(torch::equal(g1[0], torch::autograd::grad({net.loss()}, {net.w1})[0]));
  EXPECT_TRUE(torch::equal(g2[0], torch::autograd::grad({net.loss()}, {net.w2})[0]));
  EXPECT_EQ(cb.stats().misses, 2u);
  EXPECT_EQ(cb.stats().hits, 0u);
}

// grad() of w1 then of w2 walks two chains of the same node types and edges: only which node
// was reached tells them apart.
TEST(CompiledGrad, LookAlikeChainsToOtherInputsAreOtherGraphs) {
  const at::Tensor w1 = torch::randn({3}, torch::requires_grad());
  const at::Tensor w2 = torch::randn({3}, torch::requires_grad());
  const at::Tensor x = torch::randn({3});
  auto loss = [&] { return (w1 * x - w2 * x).sum(); };
  CompiledBackward cb;
  const auto g1 = cb.grad({loss()}, {w1});
  const auto g2 = cb.grad({loss()}, {w2});
  EXPECT_TRUE(torch::equal(g1[0], torch::autograd::grad({loss()}, {w1})[0]));
  EXPECT_TRUE(torch::equal(g2[0], torch::autograd::grad({loss()}, {w2})[0]));
  EXPECT_EQ(cb.stats().misses, 2u);
}

// The engine runs a differentiated tensor's pre-hooks before it reads its gradient, even though
// grad() does not run that tensor's node: retain_grad fills .grad, a tensor hook changes it.
TEST(CompiledGrad, HooksOnADifferentiatedTensorActAsInEager) {
  const at::Tensor w = torch::randn({3}, torch::requires_grad());
  auto retained = [&] {
    at::Tensor y = w * 2;
    y.retain_grad();
    return y;
  };
  CompiledBackward cb;
  const at::Tensor mine = retained(), theirs = retained();
  const auto g = cb.grad({(mine * mine).sum()}, {mine});
  const auto expected = torch::autograd::grad({(theirs * theirs).sum()}, {theirs});
  EXPECT_TRUE(torch::equal(g[0], expected[0]));
  ASSERT_EQ(mine.grad().defined(), theirs.grad().defined());
  if (theirs.grad().defined()) {
    EXPECT_TRUE(torch::equal(mine.grad(), theirs.grad()));
  }
  EXPECT_EQ(cb.stats().eager_fallbacks, 0u);

  auto hooked = [&] {
    at::Tensor y = w * 2;
    y.register_hook([](const at::Tensor& grad) { return grad * 3; });
    return y;
  };
  const at::Tensor a = hooked(), b = hooked();
  const auto with_hook = cb.grad({(a * a).sum()}, {a});
  EXPECT_TRUE(torch::equal(with_hook[0], torch::autograd::grad({(b * b).sum()}, {b})[0]));
  EXPECT_EQ(cb.stats().eager_fallbacks, 1u);
}

// A replay skips view tracking only in calls whose outputs nobody sees again: what grad()
// returns is a view where eager's is (x.t()'s backward returns grad.t()), and a .grad that
// accumulates in place counts versions as eager's does.
TEST(CompiledGrad, ReturnedViewsAndGradVersionsAreEagers) {
  torch::manual_seed(5);
  const at::Tensor x = torch::randn({3, 4}, torch::requires_grad());
  const at::Tensor w = torch::randn({3, 5});
  auto loss = [&] { return x.t().mm(w).tanh().sum(); };
  const at::Tensor eager = torch::autograd::grad({loss()}, {x})[0];
  ASSERT_TRUE(eager.is_view());
  CompiledBackwardOptions options;
  options.strict = true;
  CompiledBackward cb(options);
  for (int step = 0; step < 2; ++step) {
    const at::Tensor mine = cb.grad({loss()}, {x})[0];
    EXPECT_TRUE(torch::equal(mine, eager)) << "step " << step;
    EXPECT_TRUE(mine.is_view()) << "step " << step;
  }
  std::vector<int64_t> versions;
  for (const bool replay : {false, true}) {
    x.mutable_grad().reset();
    for (int step = 0; step < 3; ++step) {
      if (replay) {
        cb.backward({loss()});
      } else {
        loss().backward();
      }
    }
    versions.push_back(x.grad()._version());
    EXPECT_TRUE(torch::allclose(x.grad(), 3 * eager)) << (replay ? "replay" : "eager");
  }
  EXPECT_EQ(versions[1], versions[0]);
  EXPECT_GT(versions[0], 0);       // it did accumulate in place
  EXPECT_EQ(cb.stats().hits, 2u);  // grad() once, and backward() once .grad existed
}

// What a .grad shares with the caller's tensors: x.view(-1)'s backward returns a view of the
// root grad the caller passed, and AccumulateGrad keeps a detached alias of it, so the two
// count versions together (a later in-place write to one shows in the other's version); a
// grad made as a view of a tensor written in place keeps that tensor's count. (A count a
// formula makes on a fresh grad of its own is not kept: see the README's "What a replay skips".)
TEST(CompiledGrad, AGradStolenFromAViewSharesItsVersionCounterAsInEager) {
  torch::manual_seed(6);
  const at::Tensor x = torch::randn({2, 3}, torch::requires_grad());
  struct Seen {
    bool bumps_with_root;
    int64_t version;
  };
  auto run = [&](CompiledBackward* cb) {
    x.mutable_grad().reset();
    const at::Tensor g = torch::randn({6});
    const at::Tensor y = x.view(-1);  // ViewBackward0 returns a view of g
    cb != nullptr ? (void)cb->backward({y}, {g}) : y.backward(g);
    const int64_t before = x.grad()._version();
    g.mul_(2);
    const bool bumps = x.grad()._version() == before + 1;
    x.mutable_grad().reset();
    at::Tensor b = x.t().clone();
    b[0].mul_(2);  // CopySlices: its result counts two in-place writes before TBackward0's view
    cb != nullptr ? (void)cb->backward({b.sum()}) : b.sum().backward();
    return Seen{bumps, x.grad()._version()};
  };
  const Seen eager = run(nullptr);
  EXPECT_TRUE(eager.bumps_with_root);
  CompiledBackwardOptions options;
  options.strict = true;
  CompiledBackward cb(options);
  for (int step = 0; step < 2; ++step) {
    const Seen mine = run(&cb);
    EXPECT_EQ(mine.bumps_with_root, eager.bumps_with_root) << "step " << step;
    EXPECT_EQ(mine.version, eager.version) << "step " << step;
  }
  EXPECT_EQ(cb.stats().hits, 2u);
}

/// The identity, whose backward reports whether its grad is a view: user code sees what eager's
/// engine would hand it.
struct ReportsViews : public torch::autograd::Function<ReportsViews> {
  static std::vector<bool>& seen() {
    static std::vector<bool> views;
    return views;
  }
  static at::Tensor forward(AutogradContext*, const at::Tensor& x) { return x.clone(); }
  static variable_list backward(AutogradContext*, variable_list grads) {
    seen().push_back(grads[0].is_view());
    return {grads[0]};
  }
};

TEST(CompiledGrad, ACustomFunctionGetsTheViewsEagerWouldGiveIt) {
  register_function<ReportsViews>();
  torch::manual_seed(7);
  const at::Tensor x = torch::randn({3, 4}, torch::requires_grad());
  const at::Tensor w = torch::randn({3, 5});
  auto loss = [&] { return ReportsViews::apply(x).t().mm(w).sum(); };  // grad: TBackward0's view
  ReportsViews::seen().clear();
  loss().backward();
  CompiledBackwardOptions options;
  options.strict = true;
  CompiledBackward cb(options);
  for (int step = 0; step < 2; ++step) cb.backward({loss()});
  ASSERT_EQ(ReportsViews::seen().size(), 3u);
  EXPECT_TRUE(ReportsViews::seen()[0]);  // eager's
  EXPECT_EQ(ReportsViews::seen()[1], ReportsViews::seen()[0]);
  EXPECT_EQ(ReportsViews::seen()[2], ReportsViews::seen()[0]);
}

TEST(CompiledGrad, AnUnusedInputThrowsUnlessAllowed) {
  torch::manual_seed(2);
  Net net;
  const at::Tensor unused = torch::randn({3}, torch::requires_grad());
  CompiledBackward cb;
  try {
    cb.grad({net.loss()}, {net.w1, unused});
    FAIL() << "expected CaptureError";
  } catch (const CaptureError& e) {
    EXPECT_TRUE(test::contains(e.what(), "inputs[1]")) << e.what();
  }
  GradOptions allow;
  allow.allow_unused = true;
  const auto g = cb.grad({net.loss()}, {net.w1, unused}, {}, allow);
  EXPECT_TRUE(g[0].defined());
  EXPECT_FALSE(g[1].defined());
  EXPECT_THROW(cb.grad({net.loss()}, {net.x}), CaptureError);  // does not require grad
}

TEST(CompiledBackward, RetainGradOnANonLeafWritesItsGradLikeEager) {
  torch::manual_seed(3);
  Net mine;
  Net eager = mine;
  eager.w1 = mine.w1.detach().clone().requires_grad_();
  eager.w2 = mine.w2.detach().clone().requires_grad_();
  CompiledBackward cb;
  for (int step = 0; step < 3; ++step) {
    mine.w1.mutable_grad().reset();
    eager.w1.mutable_grad().reset();
    mine.w2.mutable_grad().reset();
    eager.w2.mutable_grad().reset();
    cb.backward({mine.loss(/*retain_hidden=*/true)});
    eager.loss(/*retain_hidden=*/true).backward();
    ASSERT_TRUE(mine.hidden.grad().defined()) << "step " << step;
    EXPECT_TRUE(torch::equal(mine.hidden.grad(), eager.hidden.grad()));
    EXPECT_TRUE(torch::equal(mine.w1.grad(), eager.w1.grad()));
    EXPECT_TRUE(torch::equal(mine.w2.grad(), eager.w2.grad()));
  }
  EXPECT_EQ(cb.stats().eager_fallbacks, 0u);
  EXPECT_EQ(cb.stats().hits, 2u);
  cb.backward({mine.loss(/*retain_hidden=*/false)});  // no hook now: another graph
  EXPECT_EQ(cb.stats().misses, 2u);
}

// mark_dirty: upstream's compiled_args for custom functions asserts it is unused.
struct AddOneInPlace : torch::autograd::Function<AddOneInPlace> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x) {
    ctx->mark_dirty({x});
    return x.add_(1);
  }
  static variable_list backward(AutogradContext*, variable_list grads) { return grads; }
};
CA_REGISTER_FUNCTION(AddOneInPlace);

// Compiled autograd cannot hold it, so the node runs as itself (opaque) and the rest replays.
TEST(CompiledBackward, ACustomFunctionThatMarksDirtyRunsAsItselfWithTheReason) {
  torch::manual_seed(3);
  const at::Tensor w = torch::randn({3}, torch::requires_grad());
  const at::Tensor eager_w = w.detach().clone().requires_grad_();
  auto loss_of = [](const at::Tensor& p) { return AddOneInPlace::apply(p * 2).pow(2).sum(); };
  CompiledBackward strict(CompiledBackwardOptions{8, /*strict=*/true, {}, {}});
  for (int step = 0; step < 3; ++step) {  // no .grad yet, then with one: two graphs
    strict.backward({loss_of(w)});
    loss_of(eager_w).backward();
    EXPECT_TRUE(torch::equal(w.grad(), eager_w.grad())) << "step " << step;
  }
  EXPECT_EQ(strict.stats().eager_fallbacks, 0u);
  EXPECT_EQ(strict.stats().misses, 2u);
  EXPECT_EQ(strict.stats().hits, 1u);
  EXPECT_EQ(strict.stats().opaque_calls, 3u);
  EXPECT_TRUE(test::contains(strict.stats().last_opaque_nodes, "mark_dirty"))
      << strict.stats().last_opaque_nodes;
}

struct SortValues : torch::autograd::Function<SortValues> {
  static variable_list forward(AutogradContext* ctx, const at::Tensor& x) {
    auto [values, indices] = x.sort();
    ctx->mark_non_differentiable({indices});
    ctx->save_for_backward({indices});
    return {values, indices};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const at::Tensor indices = ctx->get_saved_variables()[0];
    return {torch::zeros_like(grads[0]).scatter(0, indices, grads[0])};
  }
};
CA_REGISTER_FUNCTION(SortValues);

TEST(CompiledBackward, ACustomFunctionWithNonDifferentiableOutputsRunsAsItselfWithTheReason) {
  const at::Tensor w = torch::randn({5}, torch::requires_grad());
  CompiledBackward cb;
  cb.backward({SortValues::apply(w * 3)[0].pow(2).sum()});
  EXPECT_TRUE(torch::allclose(w.grad(), 18 * w.detach()));
  EXPECT_EQ(cb.stats().eager_fallbacks, 0u);
  EXPECT_EQ(cb.stats().opaque_calls, 1u);
  EXPECT_TRUE(test::contains(cb.stats().last_opaque_nodes, "mark_non_differentiable"))
      << cb.stats().last_opaque_nodes;
}

// A backward that calls backward itself (reentrant), as checkpointing does.
struct SquareByInnerGrad : torch::autograd::Function<SquareByInnerGrad> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x) {
    ctx->save_for_backward({x});
    return x * x;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    torch::AutoGradMode on(true);
    const at::Tensor x = ctx->get_saved_variables()[0].detach().requires_grad_();
    const at::Tensor dx = torch::autograd::grad({(x * x).sum()}, {x})[0];
    return {grads[0] * dx};
  }
};
CA_REGISTER_FUNCTION(SquareByInnerGrad);

TEST(EngineHook, AReentrantBackwardRunsEagerlyInsteadOfLocking) {
  const at::Tensor w = torch::randn({4}, torch::requires_grad());
  EnableGuard on;
  for (int step = 0; step < 2; ++step) {
    w.mutable_grad().reset();
    SquareByInnerGrad::apply(w).sum().backward();
    EXPECT_TRUE(torch::allclose(w.grad(), 2 * w.detach())) << "step " << step;
  }
  EXPECT_EQ(enabled_stats().hits, 1u);
}

TEST(EngineHook, GradAndBackwardWithInputsReplay) {
  torch::manual_seed(4);
  Net net;
  const at::Tensor expected = torch::autograd::grad({net.loss()}, {net.w1})[0];
  EnableGuard on;
  for (int step = 0; step < 2; ++step) {
    const auto mine = torch::autograd::grad({net.loss()}, {net.w1});
    EXPECT_TRUE(torch::equal(mine[0], expected)) << "step " << step;
  }
  EXPECT_EQ(enabled_stats().misses, 1u);
  EXPECT_EQ(enabled_stats().hits, 1u);
  torch::autograd::backward({net.loss()}, {}, {}, false, /*inputs=*/{net.w2});
  EXPECT_TRUE(net.w2.grad().defined());
  EXPECT_FALSE(net.w1.grad().defined());
  EXPECT_EQ(enabled_stats().misses, 2u);
  EXPECT_EQ(enabled_stats().eager_fallbacks, 0u);
}

}  // namespace
}  // namespace ca
