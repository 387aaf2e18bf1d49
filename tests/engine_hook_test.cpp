// SPDX-License-Identifier: BSD-3-Clause
// ca::enable(): plain loss.backward() goes through the process-wide CompiledBackward and gives
// eager's gradients; what it cannot replay runs eagerly; disable() restores the eager engine.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

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

// Runs body(t) on one thread for each t in [0, n), and joins them.
template <class Body>
void on_threads(int n, const Body& body) {
  std::vector<std::thread> pool;
  for (int t = 0; t < n; ++t) pool.emplace_back([&body, t] { body(t); });
  for (std::thread& th : pool) th.join();
}

// Each thread's model has the gradients of its eager twin, bit for bit.
void expect_eager_grads(const std::vector<Mlp>& mine, const std::vector<Mlp>& eager) {
  for (size_t t = 0; t < mine.size(); ++t) {
    EXPECT_TRUE(torch::equal(mine[t].w1.grad(), eager[t].w1.grad())) << "thread " << t;
    EXPECT_TRUE(torch::equal(mine[t].w2.grad(), eager[t].w2.grad())) << "thread " << t;
  }
}

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

// disable() and enable() on one thread while others run backwards: upstream's hook swap would
// abort a backward starting meanwhile (its poison value); here the hook stays, and every
// thread's gradients are eager's whichever way each step ran, and some of them replayed.
TEST(EngineHook, EnableAndDisableWhileOtherThreadsRunBackwards) {
  torch::manual_seed(3);
  constexpr int kThreads = 2;
  constexpr int kSteps = 1000;
  std::vector<Mlp> eager(kThreads), mine;
  for (const Mlp& m : eager) mine.push_back(m.copy());
  const at::Tensor x = torch::randn({5, 4});
  for (int t = 0; t < kThreads; ++t) {
    for (int step = 0; step < kSteps; ++step) eager[t].loss(x * (t + 1)).backward();
  }
  std::atomic<int> running{kThreads};
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&, t] {
      for (int step = 0; step < kSteps; ++step) mine[t].loss(x * (t + 1)).backward();
      --running;
    });
  }
  int toggles = 0;
  size_t hits = 0;
  while (running.load() > 0) {
    enable();
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    disable();
    hits += enabled_stats().hits;  // the dropped engine's, steps still running on it included
    ++toggles;
  }
  for (std::thread& th : pool) th.join();
  EXPECT_GT(toggles, 0);
  EXPECT_GT(hits, 0u);
  expect_eager_grads(mine, eager);
}

// Four threads share the process-wide engine and its cache at once: two replay one shape each
// step, two change their batch size every step, so that with a cache of two graphs (for three
// shapes) captures, evictions and replays of other threads' graphs overlap. Every thread gets
// eager's gradients bit for bit, every backward is counted once, and the cache keeps to its bound.
TEST(EngineHook, ThreadsCaptureEvictAndReplayAtOnce) {
  torch::manual_seed(5);
  constexpr int kThreads = 4;
  constexpr int kSteps = 150;
  std::vector<Mlp> eager(kThreads), mine;
  for (const Mlp& m : eager) mine.push_back(m.copy());
  std::vector<at::Tensor> batches;
  for (int64_t rows : {3, 5, 7}) batches.push_back(torch::randn({rows, 4}));
  const auto batch = [&](int t, int step) -> const at::Tensor& {
    return batches[t < 2 ? t : (step + t) % 3];
  };
  for (int t = 0; t < kThreads; ++t) {
    for (int step = 0; step < kSteps; ++step) eager[t].loss(batch(t, step)).backward();
  }
  CompiledBackwardOptions options;
  options.cache_size = 2;
  EnableGuard on(options);
  on_threads(kThreads, [&](int t) {
    for (int step = 0; step < kSteps; ++step) mine[t].loss(batch(t, step)).backward();
  });
  const CompiledBackwardStats s = enabled_stats();
  EXPECT_EQ(s.hits + s.misses + s.eager_fallbacks, size_t{kThreads * kSteps});
  EXPECT_EQ(s.eager_fallbacks, 0u) << s.last_fallback_reason;
  EXPECT_GT(s.hits, 0u);
  EXPECT_GT(s.misses, 6u);  // more than one capture per key: graphs were evicted and recaptured
  EXPECT_LE(s.cached_graphs, 2u);
  expect_eager_grads(mine, eager);
}

// Hogwild: threads build their own forward graphs on the same leaves and accumulate into their
// .grad at once. Every update lands, as with eager's AccumulateGrad (which holds the leaf's
// accumulator lock): the sum equals the same number of backwards run one after another.
TEST(EngineHook, ThreadsAccumulatingIntoSharedLeavesLoseNoUpdate) {
  torch::manual_seed(6);
  constexpr int kThreads = 2;
  constexpr int kSteps = 1000;
  Mlp shared;
  Mlp eager = shared.copy();
  const at::Tensor x = torch::randn({5, 4});
  for (int step = 0; step < kThreads * kSteps; ++step) eager.loss(x).backward();
  EnableGuard on;
  on_threads(kThreads, [&](int) {
    for (int step = 0; step < kSteps; ++step) shared.loss(x).backward();
  });
  const CompiledBackwardStats s = enabled_stats();
  EXPECT_EQ(s.hits + s.misses + s.eager_fallbacks, size_t{kThreads * kSteps});
  EXPECT_GT(s.hits, 0u);
  // A step whose capture saw the other thread's first .grad appear after its walk runs eagerly.
  if (s.eager_fallbacks > 0) {
    EXPECT_TRUE(test::contains(s.last_fallback_reason, "written by a backward on another thread"))
        << s.last_fallback_reason;
  }
  EXPECT_TRUE(torch::equal(shared.w1.grad(), eager.w1.grad()));
  EXPECT_TRUE(torch::equal(shared.w2.grad(), eager.w2.grad()));
}

// A hook that itself runs a backward (of another graph): the hooked step runs eagerly, and the
// backward inside it runs eagerly too, on the same thread, uncounted.
// The hooked node runs as itself inside the replay; the backward its hook starts runs eagerly
// inside it (reentrant), uncounted.
TEST(EngineHook, ABackwardStartedInsideAHookRuns) {
  auto run = [](bool enabled) {
    torch::manual_seed(4);
    Mlp m;
    auto side = torch::randn({3}, torch::requires_grad());
    const at::Tensor x = torch::randn({5, 4});
    std::optional<EnableGuard> on;
    if (enabled) on.emplace();
    at::Tensor h = torch::linear(x, m.w1);
    h.register_hook([&side](const at::Tensor& g) {
      const torch::AutoGradMode grad_mode(true);  // a backward runs its hooks with grad mode off
      (side * g.sum().detach()).sum().backward();
      return g;
    });
    torch::linear(h.relu(), m.w2).sum().backward();
    return std::vector<at::Tensor>{side.grad(), m.w1.grad(), m.w2.grad()};
  };
  const std::vector<at::Tensor> eager = run(false);
  const std::vector<at::Tensor> mine = run(true);
  EXPECT_EQ(enabled_stats().eager_fallbacks, 0u);
  EXPECT_EQ(enabled_stats().misses, 1u);
  EXPECT_EQ(enabled_stats().opaque_calls, 1u);
  for (size_t k = 0; k < eager.size(); ++k) {
    ASSERT_TRUE(mine[k].defined()) << k;
    EXPECT_TRUE(torch::equal(mine[k], eager[k])) << k;
  }
}

}  // namespace
}  // namespace ca
