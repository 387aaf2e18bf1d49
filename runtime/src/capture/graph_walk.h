#pragma once
// Pass 1 over an autograd graph, shared by capture and the trainer API's per-step walk: upstream's
// node order, every node's compiled_args (its saved tensors, sizes and lifted scalars collected
// in upstream's order, which is the graph-input order) and every node's cache key.

#include <torch/csrc/dynamo/compiled_autograd.h>

#include <memory>
#include <string>
#include <vector>

#include "torch_compat.h"

namespace ca::detail {

using AgNode = torch::autograd::Node;  // ca::Node is the IR node
using NodePtr = compat::NodePtr;

/// A walked autograd graph. Not movable: upstream's compiler call holds references into itself.
struct GraphWalk {
  NodePtr root;                ///< the GraphRoot built for the roots
  std::vector<NodePtr> order;  ///< upstream's execution order (Kahn, LIFO worklist)
  torch::dynamo::autograd::AutogradCompilerCall compiler{
      torch::dynamo::autograd::SizeInput::STATIC};
  std::vector<torch::dynamo::autograd::NodeCall*> calls;  ///< by position in `order`
  std::vector<std::string> node_keys;  ///< by position: node type + specialization bytes
};

/// Walks the graph of `roots` as `torch::autograd::backward(roots, grads)` would run it
/// (`grads` defaults to ones for one-element roots). Throws CaptureError for roots that do not
/// require grad, for Python-only nodes and hooks, and for nodes whose compiled_args fails,
/// naming the node. With `keys`, records each node's cache key.
std::unique_ptr<GraphWalk> walk_graph(const std::vector<at::Tensor>& roots,
                                      const std::vector<at::Tensor>& grads, bool keys);

/// The same from a GraphRoot already built (the engine's, when ca::enable() routes a backward()).
std::unique_ptr<GraphWalk> walk_from_root(NodePtr root, bool keys);

/// "node 3 (MulBackward0)".
std::string node_label(const AgNode& node, size_t index);

}  // namespace ca::detail
