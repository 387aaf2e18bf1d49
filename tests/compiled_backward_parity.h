// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Runs a loss through CompiledBackward and through eager backward side by side, each on its own
// copy of the parameters, and compares every .grad after every step.

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <initializer_list>
#include <vector>

#include "ca/compiled_backward.h"

namespace ca::test {

using Params = std::vector<at::Tensor>;
using LossFn = std::function<at::Tensor(const Params&, int step)>;

inline Params leaves(const Params& init) {
  Params out;
  for (const at::Tensor& t : init)
    out.push_back(t.detach().clone().requires_grad_(t.requires_grad()));
  return out;
}

/// Runs `steps` backward calls of `loss_of` through `cb` and through eager backward, each on its
/// own copy of the parameters, and checks every .grad after every step. Grads are cleared before
/// each step unless `accumulate` (whether a leaf has a .grad is itself part of the key).
inline void expect_matches_eager(CompiledBackward& cb, const LossFn& loss_of, const Params& init,
                                 int steps, bool accumulate = false) {
  Params mine = leaves(init), theirs = leaves(init);
  for (int step = 0; step < steps; ++step) {
    for (size_t k = 0; k < init.size() && !accumulate; ++k) {
      mine[k].mutable_grad().reset();
      theirs[k].mutable_grad().reset();
    }
    cb.backward({loss_of(mine, step)});
    loss_of(theirs, step).backward();
    for (size_t k = 0; k < init.size(); ++k) {
      ASSERT_EQ(mine[k].grad().defined(), theirs[k].grad().defined()) << "step " << step;
      if (!theirs[k].grad().defined()) continue;
      EXPECT_EQ(mine[k].grad().scalar_type(), theirs[k].grad().scalar_type());
      EXPECT_TRUE(torch::allclose(mine[k].grad(), theirs[k].grad(), 1e-6, 1e-7))
          << "step " << step << " param " << k << "\n"
          << mine[k].grad() << "\n"
          << theirs[k].grad();
    }
  }
}

inline Params params(std::initializer_list<std::vector<int64_t>> shapes) {
  Params out;
  for (const auto& s : shapes) out.push_back(torch::randn(s, torch::requires_grad()));
  return out;
}

}  // namespace ca::test
