#include "capture/graph_walk.h"

#include <torch/csrc/autograd/functions/accumulate_grad.h>
#include <torch/csrc/autograd/functions/basic_ops.h>
#include <torch/csrc/autograd/variable.h>

#include <typeinfo>
#include <unordered_map>

#include "ca/error.h"
#include "session/compiler_session.h"

namespace ca::detail {
namespace {

namespace dyn = torch::dynamo::autograd;
using torch::autograd::variable_list;

// Python-only nodes and hooks cannot run without Python: refuse them up front.
void check_capturable(AgNode& node, size_t index) {
  const std::string type = typeid(node).name();
  if (type.find("PyNode") != std::string::npos || type.find("PyFunction") != std::string::npos) {
    throw CaptureError(node_label(node, index) + ": Python autograd.Function nodes need Python");
  }
  const char* hook = !node.tensor_pre_hooks().empty()     ? "tensor pre-hooks"
                     : !node.retains_grad_hooks().empty() ? "retain_grad hooks"
                     : !node.pre_hooks().empty()          ? "pre-hooks"
                     : !node.post_hooks().empty()         ? "post-hooks"
                                                          : nullptr;
  if (hook != nullptr) {
    throw CaptureError(node_label(node, index) + " has " + hook +
                       ", which capture does not "
                       "support yet; remove them or run eager backward");
  }
  if (auto* acc = dynamic_cast<const torch::autograd::AccumulateGrad*>(&node);
      acc != nullptr && acc->tensor_post_acc_grad_hooks() != nullptr) {
    throw CaptureError(node_label(node, index) + " has a post-accumulate-grad hook");
  }
}

// Reverse-topological order as upstream builds it: Kahn's algorithm over dependency counts,
// with a LIFO worklist starting at the root.
std::vector<NodePtr> order_nodes(const NodePtr& root) {
  std::unordered_map<AgNode*, int> deps;
  std::vector<AgNode*> stack{root.get()};
  std::unordered_map<AgNode*, bool> seen{{root.get(), true}};
  while (!stack.empty()) {
    AgNode* fn = stack.back();
    stack.pop_back();
    for (const auto& edge : fn->next_edges()) {
      if (!edge.is_valid()) continue;
      ++deps[edge.function.get()];
      if (!seen[edge.function.get()]) {
        seen[edge.function.get()] = true;
        stack.push_back(edge.function.get());
      }
    }
  }
  std::vector<NodePtr> order;
  std::vector<NodePtr> worklist{root};
  while (!worklist.empty()) {
    NodePtr fn = std::move(worklist.back());
    worklist.pop_back();
    for (const auto& edge : fn->next_edges()) {
      if (edge.is_valid() && --deps[edge.function.get()] == 0) worklist.push_back(edge.function);
    }
    order.push_back(std::move(fn));
  }
  return order;
}

// Pass 1, as upstream's cache-key pass: every node's compiled_args, which collects its saved
// tensors, sizes and lifted scalars into `compiler`.
void collect_all(GraphWalk& st, const std::vector<NodePtr>& order, bool keys) {
  for (size_t i = 0; i < order.size(); ++i) {
    check_capturable(*order[i], i);
    dyn::NodeCall& call = st.compiler.node_calls.lookup(order[i]);
    st.calls.push_back(&call);
    st.compiler.set_active_node_call_idx(i);
    std::string* key = keys ? &st.node_keys.emplace_back() : nullptr;
    try {
      collect_node(st.compiler, call, *order[i], /*with_edges=*/true, key);
    } catch (const c10::Error& e) {
      throw CaptureError(node_label(*order[i], i) + ": " + e.what_without_backtrace());
    }
  }
}

NodePtr make_root(const std::vector<at::Tensor>& roots, const std::vector<at::Tensor>& grads) {
  if (roots.empty()) throw CaptureError("capture needs at least one root tensor");
  if (!grads.empty() && grads.size() != roots.size()) {
    throw CaptureError("capture got " + std::to_string(grads.size()) + " grads for " +
                       std::to_string(roots.size()) + " roots");
  }
  torch::autograd::edge_list edges;
  variable_list root_grads;
  for (size_t i = 0; i < roots.size(); ++i) {
    const at::Tensor& r = roots[i];
    if (!r.defined() || !r.requires_grad()) {
      throw CaptureError("roots[" + std::to_string(i) + "] does not require grad");
    }
    if (grads.empty() && r.numel() != 1) {
      throw CaptureError("roots[" + std::to_string(i) + "] has " + std::to_string(r.numel()) +
                         " elements: give its grad explicitly");
    }
    edges.push_back(torch::autograd::impl::gradient_edge(r));
    root_grads.push_back(grads.empty() ? at::ones_like(r, at::MemoryFormat::Preserve) : grads[i]);
  }
  return compat::make_node<torch::autograd::GraphRoot>(std::move(edges), std::move(root_grads));
}

}  // namespace

std::string node_label(const AgNode& node, size_t index) {
  return "node " + std::to_string(index) + " (" + node.name() + ")";
}

std::unique_ptr<GraphWalk> walk_graph(const std::vector<at::Tensor>& roots,
                                      const std::vector<at::Tensor>& grads, bool keys) {
  return walk_from_root(make_root(roots, grads), keys);
}

std::unique_ptr<GraphWalk> walk_from_root(NodePtr root, bool keys) {
  auto walk = std::make_unique<GraphWalk>();
  walk->root = std::move(root);
  walk->order = order_nodes(walk->root);
  collect_all(*walk, walk->order, keys);
  return walk;
}

}  // namespace ca::detail
