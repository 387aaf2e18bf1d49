// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Table-driven parity: capture a libtorch backward in C++, replay it Python-free, and compare
// with eager autograd's gradients for the same leaves.

#include <torch/torch.h>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "ca/capture.h"
#include "ca/executor.h"
#include "ca/graph.h"

namespace ca::testing {

/// One forward pass: the roots to differentiate and, optionally, their grads.
struct Forward {
  std::vector<at::Tensor> roots;
  std::vector<at::Tensor> grads;  ///< empty: ones for scalar roots
};

/// A parity case: builds fresh leaves and runs the forward on them.
struct ParityCase {
  std::string name;
  std::function<Forward()> forward;
  /// Largest relative error allowed: float32 by default; float64 cases pass tighter bounds.
  double max_rel_error = 1e-6;
};

/// gtest prints a case by its name (ctest lists each parameterized test with it).
inline void PrintTo(const ParityCase& c, std::ostream* os) { *os << c.name; }

/// Max |got - want| / max(|want|max, 1e-12), or +inf on shape/dtype/definedness mismatch.
double relative_error(const at::Tensor& got, const at::Tensor& want);

/// A captured graph with its inputs, as a replaying process would get them.
struct Replayable {
  Graph graph;
  std::vector<at::Tensor> inputs;
};

/// Turns a capture into what a fresh process would see (e.g. written to bytes or files and read
/// back). Inputs handed in are detached copies; the transport may replace them.
using Transport = std::function<Replayable(Replayable)>;

/// Runs the case: eager grads vs replay of the captured graph after `transport`; checks that
/// two replays are bitwise equal, then replays the same graph on a second forward's inputs (new
/// values, same shapes) against that forward's eager grads. Reports with gtest assertions.
void check_parity(const ParityCase& c, const Transport& transport);

}  // namespace ca::testing
