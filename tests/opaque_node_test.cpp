// SPDX-License-Identifier: BSD-3-Clause
// Opaque nodes (live autograd nodes called inside a replay) against eager's engine, on what a
// node or hook can see of the engine around it: the exception it throws, a final callback it
// queues, what a pruned grad() asks it to compute, whether its leaf's gradient is stolen, and
// retain_grad on the output of one. Each case runs the same program eagerly and through a
// CompiledBackward and compares what the program saw.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "ca/compiled_backward.h"
#include "ca/custom_function.h"
#include "ca/error.h"

namespace ca {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// a * b and a's sign mask, marked non-differentiable: compiled autograd cannot hold the node, so
// it runs as itself. Its backward records what the engine says it needs and computes only that.
struct MulWithMask : torch::autograd::Function<MulWithMask> {
  static std::vector<std::vector<bool>>& needs() {
    static std::vector<std::vector<bool>> seen;
    return seen;
  }
  static variable_list forward(AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b) {
    ctx->save_for_backward({a, b});
    at::Tensor mask = a > 0;
    ctx->mark_non_differentiable({mask});
    return {a * b, mask};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const bool da = ctx->needs_input_grad(0), db = ctx->needs_input_grad(1);
    needs().push_back({da, db});
    const variable_list saved = ctx->get_saved_variables();
    return {da ? grads[0] * saved[1] : at::Tensor(), db ? grads[0] * saved[0] : at::Tensor()};
  }
};
CA_REGISTER_FUNCTION(MulWithMask);

TEST(OpaqueNodes, WhatAHookThrowsReachesTheCallerAsItWasThrown) {
  const at::Tensor w = torch::randn({3}, torch::requires_grad());
  CompiledBackward cb;
  for (int step = 0; step < 2; ++step) {
    const at::Tensor h = w * 2;
    h.register_hook([](const at::Tensor&) { throw InputError("the hook's own message"); });
    try {
      cb.backward({h.sum()});
      FAIL() << "the hook's exception was lost";
    } catch (const InputError& e) {
      EXPECT_STREQ(e.what(), "the hook's own message") << "step " << step;  // no prefix added
    }
  }
  EXPECT_EQ(cb.stats().eager_fallbacks, 0u);
}

// A hook may queue a final callback, as c10d's reducer does: it runs after every node (the
// leaf's .grad is written by then) and before backward() returns.
TEST(OpaqueNodes, AHookMayQueueAFinalCallbackThatRunsOnceTheBackwardIsDone) {
  auto run = [](CompiledBackward* cb) {
    std::vector<std::string> log;
    const at::Tensor w = torch::ones({3}, torch::requires_grad());
    for (int step = 0; step < 2; ++step) {
      const at::Tensor h = w * 2;
      h.register_hook([&log, &w](const at::Tensor&) {
        log.emplace_back("hook");
        torch::autograd::Engine::get_default_engine().queue_callback([&log, &w] {
          log.emplace_back(w.grad().defined() ? "callback, .grad written" : "callback, no .grad");
        });
      });
      const at::Tensor loss = h.pow(2).sum();
      if (cb != nullptr) {
        cb->backward({loss});
      } else {
        loss.backward();
      }
      log.emplace_back("returned");
      w.mutable_grad().reset();
    }
    return log;
  };
  const std::vector<std::string> eager = run(nullptr);
  CompiledBackward cb;
  EXPECT_EQ(run(&cb), eager);
  ASSERT_EQ(eager.size(), 6u);
  EXPECT_EQ(eager[1], "callback, .grad written");
  EXPECT_EQ(cb.stats().opaque_calls, 2u);
  EXPECT_EQ(cb.stats().eager_fallbacks, 0u);
}

// grad() with respect to one input of a live node: the node is told that only that one is
// needed, as eager's engine tells it (the task's exec_info).
TEST(OpaqueNodes, APrunedGradTellsALiveNodeWhatItNeedsAsEagerDoes) {
  torch::manual_seed(2);
  const at::Tensor a = torch::randn({4}, torch::requires_grad());
  const at::Tensor b = torch::randn({4}, torch::requires_grad());
  auto out = [&] { return MulWithMask::apply(a * 2, b * 3)[0].pow(2).sum(); };
  MulWithMask::needs().clear();
  const at::Tensor eager = torch::autograd::grad({out()}, {a})[0];
  ASSERT_EQ(MulWithMask::needs(), (std::vector<std::vector<bool>>{{true, false}}));
  MulWithMask::needs().clear();
  CompiledBackward cb;
  for (int step = 0; step < 2; ++step) {
    EXPECT_TRUE(torch::equal(cb.grad({out()}, {a})[0], eager)) << "step " << step;
  }
  EXPECT_EQ(MulWithMask::needs(), (std::vector<std::vector<bool>>(2, {true, false})));
  EXPECT_EQ(cb.stats().opaque_calls, 2u);
  EXPECT_EQ(cb.stats().eager_fallbacks, 0u);
}

// grad() of a hooked graph with respect to a leaf it does not use (allow_unused): undefined, as
// eager's.
TEST(OpaqueNodes, AnUnusedInputOfAPrunedGradIsUndefined) {
  const at::Tensor a = torch::randn({3}, torch::requires_grad());
  const at::Tensor unused = torch::randn({3}, torch::requires_grad());
  CompiledBackward cb;
  for (int step = 0; step < 2; ++step) {
    const at::Tensor h = a * 2;
    h.register_hook([](const at::Tensor& g) { return g * 3; });
    GradOptions options;
    options.allow_unused = true;
    const variable_list g = cb.grad({h.sum()}, {a, unused}, {}, options);
    ASSERT_EQ(g.size(), 2u);
    EXPECT_TRUE(torch::equal(g[0], torch::full({3}, 6.0))) << "step " << step;
    EXPECT_FALSE(g[1].defined()) << "step " << step;
  }
  EXPECT_EQ(cb.stats().opaque_calls, 2u);
}

// A final callback a hook queues sees what eager's does: .grad of a retained tensor is written.
TEST(OpaqueNodes, AFinalCallbackSeesRetainedGradsWritten) {
  auto run = [](CompiledBackward* cb) {
    std::vector<bool> seen;
    const at::Tensor w = torch::ones({3}, torch::requires_grad());
    for (int step = 0; step < 2; ++step) {
      const at::Tensor h1 = w * 2;
      h1.retain_grad();
      const at::Tensor h2 = h1 * 3;
      h2.register_hook([&seen, &h1](const at::Tensor&) {
        torch::autograd::Engine::get_default_engine().queue_callback(
            [&seen, &h1] { seen.push_back(h1.grad().defined()); });
      });
      const at::Tensor loss = h2.sum();
      if (cb != nullptr) {
        cb->backward({loss});
      } else {
        loss.backward();
      }
    }
    return seen;
  };
  const std::vector<bool> eager = run(nullptr);
  EXPECT_EQ(eager, std::vector<bool>(2, true));
  CompiledBackward cb;
  EXPECT_EQ(run(&cb), eager);
}

// A live AccumulateGrad (the leaf has a hook) is handed the replay's last reference to its
// gradient, so it steals it as eager's does: .grad is the very tensor the hook saw.
TEST(OpaqueNodes, AHookedLeafStealsItsGradientAsEagerDoes) {
  auto run = [](CompiledBackward* cb) {
    torch::manual_seed(5);
    const at::Tensor w = torch::randn({64}, torch::requires_grad());
    const at::Tensor x = torch::randn({64});
    const void* seen = nullptr;  // an address only: a reference would forbid the steal
    w.register_hook([&seen](const at::Tensor& g) { seen = g.data_ptr(); });
    std::vector<bool> stolen;
    for (int step = 0; step < 3; ++step) {
      const at::Tensor loss = (w * x).sum();
      if (cb != nullptr) {
        cb->backward({loss});
      } else {
        loss.backward();
      }
      stolen.push_back(w.grad().data_ptr() == seen);
      w.mutable_grad().reset();
    }
    return stolen;
  };
  const std::vector<bool> eager = run(nullptr);
  EXPECT_EQ(eager, std::vector<bool>(3, true));
  CompiledBackward cb;
  EXPECT_EQ(run(&cb), eager);
  EXPECT_EQ(cb.stats().opaque_calls, 3u);
}

// grad() with respect to a live node's output and to something past it: the node runs, and its
// output's retain_grad hook runs once, from the node, as in eager.
TEST(OpaqueNodes, RetainGradOnALiveNodesOutputRunsOnceInAGrad) {
  torch::manual_seed(6);
  const at::Tensor a = torch::randn({4}, torch::requires_grad());
  const at::Tensor b = torch::randn({4});
  auto run = [&](CompiledBackward* cb) {
    std::vector<at::Tensor> seen;
    for (int step = 0; step < 2; ++step) {
      const at::Tensor h = MulWithMask::apply(a * 2, b)[0];
      h.retain_grad();
      const at::Tensor loss = h.pow(2).sum();
      variable_list grads =
          cb != nullptr ? cb->grad({loss}, {h, a}) : torch::autograd::grad({loss}, {h, a});
      grads.push_back(h.grad());
      seen.insert(seen.end(), grads.begin(), grads.end());
    }
    return seen;
  };
  const std::vector<at::Tensor> eager = run(nullptr);
  CompiledBackward cb;
  const std::vector<at::Tensor> mine = run(&cb);
  ASSERT_EQ(mine.size(), eager.size());
  for (size_t k = 0; k < eager.size(); ++k) {
    ASSERT_EQ(mine[k].defined(), eager[k].defined()) << k;
    if (eager[k].defined()) {
      EXPECT_TRUE(torch::equal(mine[k], eager[k])) << k;
    }
  }
  EXPECT_EQ(cb.stats().opaque_calls, 2u);
  EXPECT_EQ(cb.stats().eager_fallbacks, 0u);
}

}  // namespace
}  // namespace ca
