// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The opaque nodes of one replay: the live autograd nodes capture left to themselves (hooks, a
// TorchScript DifferentiableGraphBackward, a custom function compiled autograd cannot hold),
// each called the way the eager engine calls a node.

#include <exception>
#include <string>
#include <vector>

#include "ca/executor.h"
#include "capture/graph_walk.h"

namespace ca::detail {

class LiveNodes : public OpaqueCalls {
 public:
  /// The opaque nodes of `order` at `positions` (GraphWalk::opaque), borrowed for one replay.
  /// `keep_graph`: the backward retains the graph, so their saved state is not released.
  LiveNodes(const std::vector<NodePtr>& order, const std::vector<uint32_t>& positions,
            bool keep_graph)
      : order_(order), positions_(positions), keep_graph_(keep_graph) {}

  /// As the engine's call_function and evaluate_function: tensor pre-hooks, then retain_grad
  /// hooks, then pre-hooks; the node; validate_outputs against its edges; post-hooks; its saved
  /// state released unless the graph is kept. What the node or a hook throws is kept (error())
  /// and reported to the executor as ExecutionError naming the node.
  std::vector<at::Tensor> call(size_t index, std::vector<at::Tensor>&& grads) override;

  /// Per opaque node, the leaf whose .grad it writes (a live AccumulateGrad), else null.
  std::vector<const at::Tensor*> leaves() const;

  /// What a node or hook threw in a call, for the caller to rethrow as it was (user code's own
  /// exception, as eager backward would give it); null if nothing did.
  std::exception_ptr error() const { return error_; }

 private:
  std::vector<at::Tensor> run(AgNode& fn, std::vector<at::Tensor>&& grads) const;

  const std::vector<NodePtr>& order_;
  const std::vector<uint32_t>& positions_;
  bool keep_graph_;
  std::exception_ptr error_;
};

/// "DifferentiableGraphBackward (compiled_args not implemented), ReluBackward0 (it has tensor
/// pre-hooks)": the walk's opaque node types with why, each type and reason once.
std::string describe_opaque(const GraphWalk& walk);

}  // namespace ca::detail
