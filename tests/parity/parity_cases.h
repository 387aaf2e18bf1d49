// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The parity case table, grouped by area.

#include <vector>

#include "parity/parity_harness.h"

namespace ca::testing {

/// A fresh leaf that requires grad, filled with randn.
inline at::Tensor leaf(at::IntArrayRef sizes, at::ScalarType dtype = at::kFloat) {
  return torch::randn(sizes, torch::dtype(dtype).requires_grad(true));
}

/// A forward whose single root is a scalar loss (its grad defaults to one).
inline Forward scalar(at::Tensor loss) { return Forward{{std::move(loss)}, {}}; }

std::vector<ParityCase> basic_cases();       // elementwise, linear algebra, reductions, views
std::vector<ParityCase> nn_cases();          // conv, norms, losses, pooling, dropout, embedding
std::vector<ParityCase> graph_cases();       // accumulation, unused branches, roots, custom fn
std::vector<ParityCase> model_cases();       // LSTM, GRU, attention, transformer encoder
std::vector<ParityCase> checked_op_cases();  // ops whose backward gets per-call checks

}  // namespace ca::testing
