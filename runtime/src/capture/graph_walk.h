// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Pass 1 over an autograd graph, shared by capture and the trainer API's per-step walk: upstream's
// node order, every node's compiled_args (its saved tensors, sizes and lifted scalars collected
// in upstream's order, which is the graph-input order) and every node's cache key.

#include <torch/csrc/dynamo/compiled_autograd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <typeinfo>
#include <unordered_set>
#include <vector>

#include "torch_compat.h"

namespace ca::detail {

using AgNode = torch::autograd::Node;  // ca::Node is the IR node
using NodePtr = compat::NodePtr;

/// Why a node is opaque, as far as it decides whether a later step's node is one too.
enum class OpaqueWhy : uint8_t {
  kHooks,  ///< it has hooks (hook_reason): opaque while it has them
  kType,   ///< its type (no compiled_args, an unregistered custom function): always
  kState,  ///< its state (a custom function's mark_dirty): only a full walk can tell
};

/// Which gradients a backward computes, as the engine's output edges say. Empty `outputs`:
/// every node runs (`backward(roots)`).
struct WalkTargets {
  torch::autograd::edge_list outputs;
  /// true: `backward(inputs=...)`, the output edges' nodes run and accumulate; false: `grad()`,
  /// the gradients flowing into the output edges are returned and their nodes do not run.
  bool accumulate_grad = true;
};

/// Which of several ready nodes a walk runs first. Both give a valid order; they differ in the
/// order an input buffer sums its contributions in, and a sum of three or more depends on it.
enum class NodeOrder {
  /// Upstream compiled autograd's (a LIFO worklist): the graph torch's Python capture, and so
  /// ca_export, gives for the same model.
  kUpstream,
  /// The eager engine's (its ready queue: the highest sequence number first): replayed grads
  /// are eager's bit for bit. The trainer API walks this way.
  kEager,
};

/// A gradient the replay returns as a graph output: the input buffer `input_nr` of `node`.
struct GradTap {
  AgNode* node = nullptr;  ///< null: an output edge no gradient reaches (an unused input)
  uint32_t input_nr = 0;
  /// A retain_grad hook fed with this gradient after the replay (null for grad() outputs).
  torch::autograd::FunctionPreHook* retain_hook = nullptr;
};

/// A walked autograd graph. Not movable: upstream's compiler call holds references into itself.
struct GraphWalk {
  NodePtr root;                ///< the GraphRoot built for the roots
  std::vector<NodePtr> order;  ///< execution order (Kahn, ready nodes taken as NodeOrder says)
  torch::dynamo::autograd::AutogradCompilerCall compiler{
      torch::dynamo::autograd::SizeInput::STATIC};
  std::vector<torch::dynamo::autograd::NodeCall*> calls;  ///< by position in `order`
  /// With keys: every node's cache key (its type, then its specialization bytes), one after
  /// another, and where each ends; plus each node's type for messages.
  std::string node_keys;
  std::vector<uint32_t> node_key_ends;
  std::vector<const std::type_info*> node_types;
  /// With output edges: the nodes that run (all of `order`) plus grad()'s output nodes, whose
  /// input buffers are read. Without (`pruned` false), every node is fed.
  std::unordered_set<AgNode*> fed;
  bool pruned = false;
  /// Whether gradients flowing into `node` are kept.
  bool feeds(AgNode* node) const { return !pruned || fed.count(node) != 0; }
  std::vector<GradTap> taps;  ///< graph outputs: grad() outputs first, then retain_grad hooks
  size_t grad_outputs = 0;    ///< how many of `taps` are grad() outputs
  std::string taps_key;       ///< the taps as text, for the cache key
  std::vector<const std::type_info*> capturable_types;  ///< node types found not Python's
  /// With opaque nodes allowed: the positions in `order` of the nodes capture leaves to their
  /// live selves (a replay calls them as the engine would), and why each is one.
  std::vector<uint32_t> opaque;
  std::vector<std::string> opaque_reasons;
  std::vector<OpaqueWhy> opaque_why;  ///< per opaque node, what keeps it one (StepCheck reads it)
  /// Whether the node at `position` in `order` is opaque.
  bool is_opaque(size_t position) const {
    return std::binary_search(opaque.begin(), opaque.end(), static_cast<uint32_t>(position));
  }
};

/// "it has tensor pre-hooks" (pre-hooks, post-hooks, a post-accumulate-grad hook): why `node`'s
/// hooks make it opaque; "" when it has none but retain_grad hooks (those are tapped).
std::string hook_reason(AgNode& node);

/// The engine's GraphRoot for `roots` (`grads` defaults to ones for one-element roots). Throws
/// CaptureError for roots that do not require grad or a grads count that does not match.
NodePtr make_root(const std::vector<at::Tensor>& roots, const std::vector<at::Tensor>& grads);

/// Walks the graph under `root` as the engine would run it for `targets`: only the nodes that
/// lead to a target run. Throws CaptureError for Python-only nodes, naming the node. Nodes with
/// hooks other than retain_grad, and nodes whose compiled_args fails before it collects
/// anything, are opaque with `opaque` (GraphWalk::opaque: keyed by type and edges only) and
/// refused (CaptureError) without. With `keys`, records each node's cache key.
std::unique_ptr<GraphWalk> walk_from_root(NodePtr root, bool keys, const WalkTargets& targets = {},
                                          NodeOrder order = NodeOrder::kUpstream,
                                          bool opaque = false);

/// "node 3 (MulBackward0)".
std::string node_label(const AgNode& node, size_t index);

}  // namespace ca::detail
