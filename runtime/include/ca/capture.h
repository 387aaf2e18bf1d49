// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file
/// Capture: turn a libtorch autograd graph into a ca::Graph, in pure C++, the way upstream
/// compiled autograd's `_compiled_autograd_impl` does it, minus Python.

#include <ATen/core/Tensor.h>

#include <vector>

#include "ca/graph.h"

namespace ca {

/// Options for capture(); defaults mirror `torch::autograd::backward(roots, grads)`.
struct CaptureOptions {
  /// Free the autograd graph's saved tensors after capture, as backward() without
  /// retain_graph does. The returned inputs keep what the graph needs.
  bool release_variables = false;
};

/// A captured graph and the real tensors for its inputs.
struct CaptureResult {
  Graph graph;
  /// One tensor per graph input, in graph-input order: grad outputs, saved tensors and
  /// parameters (the very tensors whose .grad a replay writes). Held, not copied.
  std::vector<at::Tensor> inputs;
};

/// Captures the backward graph of `roots` as `torch::autograd::backward(roots, grads)` would run
/// it: gradients accumulate into the leaves' .grad (accumulate_grad nodes). `grads` defaults to
/// ones for scalar roots. A non-leaf tensor with retain_grad() has its gradient returned as a
/// graph output (Executor::run returns graph outputs before the .grad tensors). Nothing is computed
/// and the autograd graph is left intact, so eager backward can still run on it. Throws
/// CaptureError naming the node for Python-only nodes, hooks other than retain_grad, saved-tensor
/// hooks, state the IR cannot hold, or a custom function keeping a tensor that requires grad in
/// saved_data (its autograd history cannot be stored; the trainer API replays such functions).
/// Captures on several threads take turns (libtorch has one `PyCompilerInterface` slot a
/// process); no other user of that slot (torch's Python compiled autograd) may run meanwhile.
/// While it records, a capture swaps the graph's saved values for stand-ins: no other thread
/// may run a backward through the same nodes meanwhile.
CaptureResult capture(const std::vector<at::Tensor>& roots,
                      const std::vector<at::Tensor>& grads = {},
                      const CaptureOptions& options = {});

}  // namespace ca
