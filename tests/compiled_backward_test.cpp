// SPDX-License-Identifier: BSD-3-Clause
// CompiledBackward against eager backward: the same gradients step after step, a miss (never a
// stale replay) whenever a constant the graph bakes in changes, eager fallback where capture
// cannot go, and a bounded LRU cache.
#include "ca/compiled_backward.h"

#include <ATen/record_function.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/torch.h>

#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "ca/custom_function.h"
#include "ca/error.h"
#include "compiled_backward_parity.h"
#include "test_util.h"

namespace ca {
namespace {

using test::expect_matches_eager;
using test::leaves;
using test::Params;
using test::params;

TEST(CompiledBackward, SgdTrainingMatchesEagerAndReplaysFromTheCache) {
  torch::manual_seed(0);
  const Params init = params({{16, 8}, {16}, {4, 16}, {4}});
  const at::Tensor x = torch::randn({5, 8});
  CompiledBackward cb;
  Params mine = leaves(init), theirs = leaves(init);
  auto loss = [&](const Params& p) {
    return torch::linear(torch::linear(x, p[0], p[1]).tanh(), p[2], p[3]).pow(2).mean();
  };
  for (int step = 0; step < 6; ++step) {
    cb.backward({loss(mine)});
    loss(theirs).backward();
    torch::NoGradGuard no_grad;
    for (size_t k = 0; k < init.size(); ++k) {
      ASSERT_TRUE(torch::allclose(mine[k].grad(), theirs[k].grad(), 1e-6, 1e-7)) << step;
      mine[k].sub_(mine[k].grad() * 0.1);
      theirs[k].sub_(theirs[k].grad() * 0.1);
      mine[k].mutable_grad().reset();
      theirs[k].mutable_grad().reset();
    }
  }
  EXPECT_EQ(cb.stats().misses, 1u);
  EXPECT_EQ(cb.stats().hits, 5u);
  EXPECT_EQ(cb.stats().checked_hits, 5u);  // the steady state skips the full walk
  EXPECT_EQ(cb.stats().eager_fallbacks, 0u);
  EXPECT_EQ(cb.stats().last_miss_reason, "empty cache");
}

// Each class of constant, changed between two steps with everything else equal.
TEST(CompiledBackward, AChangedScalarArgumentMisses) {
  torch::manual_seed(1);
  CompiledBackward cb;
  expect_matches_eager(
      cb,
      [](const Params& p, int step) {
        return torch::add(p[0], p[1], step == 0 ? 1.0 : 3.0).exp().sum();
      },
      params({{3}, {3}}), 2);
  EXPECT_EQ(cb.stats().misses, 2u);
  EXPECT_TRUE(test::contains(cb.stats().last_miss_reason, "AddBackward0"))
      << cb.stats().last_miss_reason;
}

TEST(CompiledBackward, AChangedExponentMisses) {
  torch::manual_seed(2);
  CompiledBackward cb;
  expect_matches_eager(
      cb, [](const Params& p, int step) { return p[0].pow(step == 0 ? 2.0 : 3.0).sum(); },
      params({{4}}), 2);
  EXPECT_EQ(cb.stats().misses, 2u);
}

TEST(CompiledBackward, AChangedBatchSizeMissesOncePerShape) {
  torch::manual_seed(3);
  CompiledBackward cb;
  const at::Tensor big = torch::randn({8, 5}), small = torch::randn({3, 5});
  expect_matches_eager(
      cb,
      [&](const Params& p, int step) { return torch::linear(step % 2 ? small : big, p[0]).sum(); },
      params({{2, 5}}), 4);
  EXPECT_EQ(cb.stats().misses, 2u);
  EXPECT_EQ(cb.stats().hits, 2u);
}

TEST(CompiledBackward, AChangedIntListAttributeMisses) {
  torch::manual_seed(4);
  CompiledBackward cb;
  expect_matches_eager(
      cb, [](const Params& p, int step) { return p[0].exp().sum(step == 0 ? 0 : 1).pow(2).sum(); },
      params({{3, 3}}), 2);
  EXPECT_EQ(cb.stats().misses, 2u);
}

TEST(CompiledBackward, ChangedCtcTargetLengthsMissWithTheSameShapes) {
  torch::manual_seed(10);
  CompiledBackward cb;
  const at::Tensor targets = torch::randint(1, 4, {2, 3}, torch::kLong);
  expect_matches_eager(
      cb,
      [&](const Params& p, int step) {
        const std::vector<int64_t> lengths =
            step == 0 ? std::vector<int64_t>{3, 2} : std::vector<int64_t>{1, 3};
        return torch::ctc_loss(p[0].log_softmax(2), targets, {6, 6}, lengths);
      },
      params({{6, 2, 4}}), 2);
  EXPECT_EQ(cb.stats().misses, 2u);
}

// Upstream's CacheKey keeps a node key's length in 16 bits: a key past 64 KiB must still be
// compared whole. Here ctc_loss's target lengths (int64 each, 9000 of them, so ~140 KiB of key)
// differ only in the last one.
TEST(CompiledBackward, NodeKeysLongerThan64KiBAreComparedWhole) {
  constexpr int64_t kBatch = 9000;
  torch::manual_seed(11);
  const at::Tensor targets = torch::randint(1, 4, {kBatch, 2}, torch::kLong);
  auto loss_of = [&](const Params& p, int step) {
    std::vector<int64_t> lengths(kBatch, 2);
    lengths.back() = step == 0 ? 2 : 1;
    return torch::ctc_loss(p[0].log_softmax(2), targets, std::vector<int64_t>(kBatch, 5), lengths);
  };
  CompiledBackward cb;
  expect_matches_eager(cb, loss_of, params({{5, kBatch, 4}}), 2);
  EXPECT_EQ(cb.stats().misses, 2u);
}

TEST(CompiledBackward, AChangedDtypeMisses) {
  torch::manual_seed(5);
  CompiledBackward cb;
  const at::Tensor x = torch::randn({4});
  expect_matches_eager(
      cb,
      [&](const Params& p, int step) {
        return (p[0] * (step == 0 ? x : x.to(torch::kDouble))).sum();
      },
      params({{4}}), 2);
  EXPECT_EQ(cb.stats().misses, 2u);
}

TEST(CompiledBackward, ALeafThatStopsRequiringGradMisses) {
  torch::manual_seed(6);
  CompiledBackward cb;
  Params mine = params({{3}, {3}});
  Params theirs = leaves(mine);
  for (int step = 0; step < 2; ++step) {
    if (step == 1) {
      mine[1].requires_grad_(false);
      theirs[1].requires_grad_(false);
    }
    cb.backward({(mine[0] * mine[1]).sum()});
    (theirs[0] * theirs[1]).sum().backward();
    EXPECT_TRUE(torch::allclose(mine[0].grad(), theirs[0].grad()));
  }
  EXPECT_EQ(cb.stats().misses, 2u);
}

TEST(CompiledBackward, AnExistingGradIsPartOfTheKeyAndAccumulatesLikeEager) {
  torch::manual_seed(7);
  CompiledBackward cb;
  // Step 0 with no .grad, then steps 1 and 2 with one: two keys, gradients accumulate.
  expect_matches_eager(
      cb, [](const Params& p, int) { return (p[0].sin() * 2).sum(); }, params({{5}}), 3,
      /*accumulate=*/true);
  EXPECT_EQ(cb.stats().misses, 2u);
  EXPECT_EQ(cb.stats().hits, 1u);
  EXPECT_TRUE(test::contains(cb.stats().last_miss_reason, "AccumulateGrad"))
      << cb.stats().last_miss_reason;
}

/// y = x * k with k kept in saved_data.
struct TimesK : public torch::autograd::Function<TimesK> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, double k) {
    ctx->saved_data["k"] = k;
    return x * k;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    return {grads[0] * ctx->saved_data["k"].toDouble(), at::Tensor()};
  }
};
CA_REGISTER_FUNCTION(TimesK);

TEST(CompiledBackward, AChangedCustomFunctionSavedDataMisses) {
  torch::manual_seed(8);
  CompiledBackward cb;
  expect_matches_eager(
      cb,
      [](const Params& p, int step) {
        return TimesK::apply(p[0].exp(), step == 0 ? 1.5 : 2.5).sum();
      },
      params({{4}}), 2);
  EXPECT_EQ(cb.stats().misses, 2u);
  EXPECT_TRUE(test::contains(cb.stats().last_miss_reason, "is 2.5, was 1.5"))
      << cb.stats().last_miss_reason;
}

TEST(CompiledBackward, WithoutRetainGraphTheGraphIsFreedAsEagerFreesIt) {
  auto w = torch::randn({3}, torch::requires_grad());
  auto loss = (w.exp() * w).sum();
  CompiledBackward cb;
  cb.backward({loss}, {}, BackwardOptions{/*retain_graph=*/true});
  EXPECT_NO_THROW(loss.backward(/*gradient=*/{}, /*retain_graph=*/true));
  cb.backward({loss});
  EXPECT_THROW(loss.backward(), c10::Error);  // freed: "backward through the graph a second time"
}

TEST(CompiledBackward, SavedTensorsAreFreedByTheEndOfTheCallAsEagerFreesThem) {
  auto w = torch::randn({4}, torch::requires_grad());
  CompiledBackward cb;
  for (int step = 0; step < 2; ++step) {  // a miss, then a hit
    at::Tensor y = (w * 3).exp();  // ExpBackward0 saves y; after this block only the graph does
    // the saved variable keeps its own TensorImpl over y's storage: watch the storage
    c10::weak_intrusive_ptr<c10::StorageImpl> saved = y.storage().getWeakStorageImpl();
    at::Tensor loss = y.sum();
    y.reset();
    ASSERT_FALSE(saved.expired());
    cb.backward({loss});
    EXPECT_TRUE(saved.expired()) << "step " << step;
    w.mutable_grad().reset();  // same key next step
  }
  EXPECT_EQ(cb.stats().hits, 1u);
}

// A hooked node runs as itself (opaque), hook included, and the rest of its graph replays; strict
// mode takes it too, since nothing falls back.
TEST(CompiledBackward, AHookedNodeRunsAsItselfAndTheRestReplays) {
  auto w = torch::randn({3}, torch::requires_grad());
  auto loss_of = [&] {
    auto y = w * 2;
    y.register_hook([](const at::Tensor& g) { return g * 3; });
    return y.sum();
  };
  CompiledBackward strict(CompiledBackwardOptions{8, /*strict=*/true, {}, {}});
  strict.backward({loss_of()});
  EXPECT_TRUE(torch::equal(w.grad(), torch::full({3}, 6.0)));
  EXPECT_EQ(strict.stats().eager_fallbacks, 0u);
  EXPECT_EQ(strict.stats().misses, 1u);
  EXPECT_EQ(strict.stats().opaque_calls, 1u);
  EXPECT_EQ(strict.stats().last_opaque_nodes, "MulBackward1 (it has tensor pre-hooks)");
}

// A node pre-hook from a lambda (torch has a lambda post-hook only).
struct LambdaPreHook : torch::autograd::FunctionPreHook {
  explicit LambdaPreHook(std::function<void(const torch::autograd::variable_list&)> fn)
      : fn_(std::move(fn)) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& grads) override {
    fn_(grads);
    return grads;
  }
  std::function<void(const torch::autograd::variable_list&)> fn_;
};

// Every kind of hook eager runs, each on its node called as itself: a leaf's tensor hook (on its
// AccumulateGrad), retain_grad plus a scaling hook on one activation, and a node's pre- and
// post-hooks. Gradients, retained .grad and what the hooks saw
// are eager's, bit for bit.
TEST(CompiledBackward, EveryHookKindRunsOnItsNodeAsEagerRunsIt) {
  struct Run {
    std::vector<at::Tensor> grads;
    std::vector<double> seen;
  };
  auto run = [](CompiledBackward* cb) {
    torch::manual_seed(12);
    const at::Tensor w1 = torch::randn({4, 6}, torch::requires_grad());
    const at::Tensor w2 = torch::randn({1, 4}, torch::requires_grad());
    const at::Tensor x = torch::randn({5, 6});
    Run r;
    w1.register_hook([](const at::Tensor& g) { return g * 0.5; });
    for (int step = 0; step < 3; ++step) {
      at::Tensor h = torch::linear(x, w1);
      h.retain_grad();
      h.register_hook([](const at::Tensor& g) { return g * 3; });
      const at::Tensor a = h.tanh();
      a.grad_fn()->add_pre_hook(
          std::make_unique<LambdaPreHook>([&r](const torch::autograd::variable_list& g) {
            r.seen.push_back(g[0].sum().item<double>());
          }));
      a.grad_fn()->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
          [&r](const torch::autograd::variable_list& out, const torch::autograd::variable_list&) {
            r.seen.push_back(out[0].sum().item<double>());
            return out;
          }));
      const at::Tensor loss = torch::linear(a, w2).pow(2).sum();
      if (cb != nullptr) {
        cb->backward({loss});
      } else {
        loss.backward();
      }
      r.grads.push_back(h.grad());
    }
    r.grads.push_back(w1.grad());
    r.grads.push_back(w2.grad());
    return r;
  };
  const Run eager = run(nullptr);
  CompiledBackward cb;
  const Run mine = run(&cb);
  ASSERT_EQ(mine.grads.size(), eager.grads.size());
  for (size_t k = 0; k < eager.grads.size(); ++k) {
    ASSERT_TRUE(mine.grads[k].defined()) << k;
    EXPECT_TRUE(torch::equal(mine.grads[k], eager.grads[k])) << k;
  }
  EXPECT_EQ(mine.seen, eager.seen);
  EXPECT_EQ(cb.stats().eager_fallbacks, 0u);
  EXPECT_EQ(cb.stats().hits + cb.stats().misses, 3u);
  EXPECT_EQ(cb.stats().opaque_calls, 3u * 3);  // w1's AccumulateGrad, h's and a's grad_fn
}

TEST(CompiledBackward, TheCacheIsBoundedAndLeastRecentlyUsedGoesFirst) {
  torch::manual_seed(9);
  auto w = torch::randn({3}, torch::requires_grad());
  auto a = [&] { return w.exp().sum(); };
  auto b = [&] { return w.sin().sum(); };
  CompiledBackward one(CompiledBackwardOptions{1, false, {}, {}});
  for (int i = 0; i < 2; ++i) {
    one.backward({a()}, {}, {/*retain_graph=*/false});
    one.backward({b()});
    w.mutable_grad().reset();
  }
  EXPECT_EQ(one.stats().misses, 4u);
  CompiledBackward two(CompiledBackwardOptions{2, false, {}, {}});
  for (int i = 0; i < 2; ++i) {
    two.backward({a()});
    two.backward({b()});
    w.mutable_grad().reset();
  }
  EXPECT_EQ(two.stats().misses, 2u);
  EXPECT_EQ(two.stats().hits, 2u);
}

// Every RecordFunction event named as eager's engine names a node it runs, counted by name.
// RecordFunction callbacks are plain function pointers, so the sink is a static.
struct EngineEvents {
  static constexpr std::string_view kPrefix = "autograd::engine::evaluate_function: ";
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::map<std::string, int>& seen() {
    static std::map<std::string, int> s;
    return s;
  }
  static std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
    const std::string_view name = fn.name();
    if (name.substr(0, kPrefix.size()) == kPrefix) {
      std::lock_guard<std::mutex> lock(mutex());
      ++seen()[std::string(name.substr(kPrefix.size()))];
    }
    return nullptr;
  }
  static std::map<std::string, int> during(const std::function<void()>& body) {
    seen().clear();
    const at::CallbackHandle handle = at::addGlobalCallback(
        at::RecordFunctionCallback(&on_start).scopes({at::RecordScope::FUNCTION}));
    body();
    at::removeCallback(handle);
    return seen();
  }
};

TEST(CompiledBackward, AProfilerSeesEveryReplayedNodeAsEagerNamesIt) {
  torch::manual_seed(10);
  const Params init = params({{8, 4}, {8}, {3, 8}});
  const at::Tensor x = torch::randn({5, 4});
  auto loss_of = [&](const Params& p) {
    return torch::nn::functional::linear(torch::relu(torch::nn::functional::linear(x, p[0], p[1])),
                                         p[2])
        .pow(2)
        .mean();
  };
  const Params eager_params = leaves(init), mine = leaves(init);
  std::map<std::string, int> eager =
      EngineEvents::during([&] { loss_of(eager_params).backward(); });
  eager.erase("GraphRoot");  // the engine runs the root as a node; a replay starts past it
  CompiledBackward cb;
  cb.backward({loss_of(mine)});  // capture
  for (const at::Tensor& p : mine) p.mutable_grad().reset();
  const std::map<std::string, int> replayed =
      EngineEvents::during([&] { cb.backward({loss_of(mine)}); });
  EXPECT_EQ(cb.stats().hits, 1u);
  ASSERT_FALSE(eager.empty());
  EXPECT_EQ(replayed, eager);  // e.g. MmBackward0 x2, ReluBackward0, AccumulateGrad x3, ...
}

}  // namespace
}  // namespace ca
