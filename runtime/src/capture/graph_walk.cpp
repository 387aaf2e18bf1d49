// SPDX-License-Identifier: BSD-3-Clause
#include "capture/graph_walk.h"

#include <c10/util/flat_hash_map.h>
#include <torch/csrc/autograd/functions/accumulate_grad.h>
#include <torch/csrc/autograd/functions/basic_ops.h>
#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <cstring>
#include <queue>
#include <typeinfo>

#include "ca/error.h"
#include "capture/custom_function_type.h"
#include "session/compiler_session.h"

namespace ca::detail {
namespace {

namespace dyn = torch::dynamo::autograd;
using torch::autograd::variable_list;

// Python-only nodes cannot run without Python: refuse them up front. `seen` holds the node types
// already found not to be Python's (a walk meets few types, and this runs for every node of
// every step). Returns why the node can only run as itself (its hooks), or "" where capture can
// take it.
std::string check_capturable(AgNode& node, size_t index, std::vector<const std::type_info*>& seen) {
  const std::type_info& type = typeid(node);
  if (std::find(seen.begin(), seen.end(), &type) == seen.end()) {
    if (std::strstr(type.name(), "PyNode") != nullptr ||
        std::strstr(type.name(), "PyFunction") != nullptr) {
      throw CaptureError(node_label(node, index) + ": Python autograd.Function nodes need Python");
    }
    seen.push_back(&type);
  }
  return hook_reason(node);
}

// How much a compiler call has collected: a compiled_args that failed having collected nothing
// left no trace, so its node can still run opaque.
size_t collected(const dyn::AutogradCompilerCall& compiler) {
  return compiler.tensor_args.inputs.size() + compiler.all_size_inputs.size() +
         compiler.lifted_ivalue_args.args.size();
}

// The engine's ready-queue order (ReadyQueue::CompareNodeTaskTime on one device, one reentrant
// depth): the ready node with the highest sequence number runs first.
struct RunsLater {
  bool operator()(const NodePtr* a, const NodePtr* b) const {
    return (*a)->sequence_nr() < (*b)->sequence_nr();
  }
};

// The ready nodes, popped in `order`'s way: upstream's LIFO stack or the engine's priority queue.
// It holds pointers to the edges' own NodePtrs (the graph keeps them alive for the walk), so a
// push or pop moves no reference count.
class ReadyNodes {
 public:
  explicit ReadyNodes(NodeOrder order) : order_(order) {}
  bool empty() const { return order_ == NodeOrder::kEager ? queue_.empty() : stack_.empty(); }
  void push(const NodePtr* fn) {
    if (order_ == NodeOrder::kEager) {
      queue_.push(fn);
    } else {
      stack_.push_back(fn);
    }
  }
  const NodePtr* pop() {
    const NodePtr* fn = nullptr;
    if (order_ == NodeOrder::kEager) {
      fn = queue_.top();
      queue_.pop();
    } else {
      fn = stack_.back();
      stack_.pop_back();
    }
    return fn;
  }

 private:
  NodeOrder order_;
  std::vector<const NodePtr*> stack_;
  std::priority_queue<const NodePtr*, std::vector<const NodePtr*>, RunsLater> queue_;
};

// Reverse-topological order: Kahn's algorithm over dependency counts from the root, the ready
// nodes taken in `order`'s way (see NodeOrder).
std::vector<NodePtr> order_nodes(const NodePtr& root, NodeOrder node_order) {
  ska::flat_hash_map<AgNode*, int> deps;  // also the set of nodes seen (no allocation a node)
  deps.reserve(256);
  deps.emplace(root.get(), 0);
  std::vector<AgNode*> stack{root.get()};
  while (!stack.empty()) {
    AgNode* fn = stack.back();
    stack.pop_back();
    for (const auto& edge : fn->next_edges()) {
      if (!edge.is_valid()) continue;
      auto [it, first] = deps.emplace(edge.function.get(), 0);
      ++it->second;
      if (first) stack.push_back(edge.function.get());
    }
  }
  std::vector<NodePtr> order;
  order.reserve(deps.size());
  ReadyNodes ready(node_order);
  ready.push(&root);
  while (!ready.empty()) {
    const NodePtr& fn = *ready.pop();
    for (const auto& edge : fn->next_edges()) {
      if (edge.is_valid() && --deps[edge.function.get()] == 0) ready.push(&edge.function);
    }
    order.push_back(fn);
  }
  return order;
}

// Upstream's CppNode::compiled_args asserts what compiled autograd cannot hold; say it in a
// user's terms instead of torch's "INTERNAL ASSERT FAILED".
std::string explain_compiled_args_error(const c10::Error& e) {
  std::string what = e.what_without_backtrace();
  if (what.find("compiled_args not implemented") != std::string::npos) {
    return "compiled autograd cannot capture this node type (it has no compiled_args)";
  }
  if (what.find("dirty_inputs_") != std::string::npos) {
    return "the custom function marks an input dirty (ctx->mark_dirty), which compiled autograd "
           "cannot capture";
  }
  if (what.find("non_differentiable_") != std::string::npos) {
    return "the custom function marks an output non-differentiable "
           "(ctx->mark_non_differentiable), which compiled autograd cannot capture";
  }
  if (what.find("has_freed_buffers_") != std::string::npos) {
    return "the custom function's saved tensors were already freed (a second backward without "
           "retain_graph)";
  }
  return what;
}

// Whether a compiled_args failure says what compiled autograd cannot hold of this node (a type
// without compiled_args, a custom function's mark_dirty or mark_non_differentiable), which the
// node itself can still run, rather than a state eager refuses too (freed saved tensors).
bool node_type_refuses(const c10::Error& e) {
  if (dynamic_cast<const c10::NotImplementedError*>(&e) != nullptr) return true;
  const std::string what = e.what_without_backtrace();
  return what.find("dirty_inputs_") != std::string::npos ||
         what.find("non_differentiable_") != std::string::npos;
}

// Pass 1, as upstream's cache-key pass: every node's compiled_args, which collects its saved
// tensors, sizes and lifted scalars into `compiler`; with `opaque`, a node capture cannot take
// is keyed by its type and edges instead (collect_opaque) and its position noted.
void collect_all(GraphWalk& st, const std::vector<NodePtr>& order, bool keys, bool opaque) {
  if (keys) {
    st.node_keys.reserve(64 * order.size());  // a node key is a few dozen bytes
    st.node_key_ends.reserve(order.size());
    st.node_types.reserve(order.size());
  }
  st.calls.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    std::string why_opaque = check_capturable(*order[i], i, st.capturable_types);
    OpaqueWhy why = OpaqueWhy::kHooks;
    if (why_opaque.empty() && opaque && is_unregistered_custom_function(typeid(*order[i]))) {
      why = OpaqueWhy::kType;
      why_opaque =
          "a custom function not registered with ca-replay (CA_REGISTER_FUNCTION would "
          "replay it)";
    }
    if (!why_opaque.empty() && !opaque) {
      throw CaptureError(node_label(*order[i], i) + ": " + why_opaque +
                         ", which only the trainer API (ca::CompiledBackward, ca::enable()) can "
                         "replay, calling the node itself; remove them or run eager backward");
    }
    dyn::NodeCall& call = st.compiler.node_calls.lookup(order[i]);
    st.calls.push_back(&call);
    st.compiler.set_active_node_call_idx(i);
    try {
      std::string* key = keys ? &st.node_keys : nullptr;
      if (why_opaque.empty()) {
        const size_t before = collected(st.compiler);
        try {
          collect_node(st.compiler, call, *order[i], /*with_edges=*/true, key);
        } catch (const c10::Error& e) {
          if (!opaque || collected(st.compiler) != before || !node_type_refuses(e)) throw;
          why_opaque = explain_compiled_args_error(e);
          const bool by_type = dynamic_cast<const c10::NotImplementedError*>(&e) != nullptr;
          why = by_type ? OpaqueWhy::kType : OpaqueWhy::kState;
        }
      }
      if (!why_opaque.empty()) {
        collect_opaque(st.compiler, call, *order[i], key);
        st.opaque.push_back(static_cast<uint32_t>(i));
        st.opaque_reasons.push_back(std::move(why_opaque));
        st.opaque_why.push_back(why);
      }
      if (keys) {
        // The node's own call id, as upstream collects it: in a pruned walk the position alone
        // does not say which node this is (grad() of w1, then of w2, walk look-alike chains).
        st.node_keys.append(reinterpret_cast<const char*>(&call.id), sizeof call.id);
        st.node_key_ends.push_back(static_cast<uint32_t>(st.node_keys.size()));
        st.node_types.push_back(&typeid(*order[i]));
      }
    } catch (const c10::Error& e) {
      throw CaptureError(node_label(*order[i], i) + ": " + explain_compiled_args_error(e));
    }
  }
}

// The nodes that run for `targets`, as the engine's GraphTask::init_to_execute decides: with
// output edges, a node runs when one of them lies below it (backward(inputs=) also runs the
// edges' own nodes; grad() only reads their input buffers). `all` is in execution order.
void select_nodes(GraphWalk& walk, std::vector<NodePtr> all, const WalkTargets& targets) {
  if (targets.outputs.empty()) {
    walk.order = std::move(all);
    return;
  }
  std::unordered_set<AgNode*> runs{walk.root.get()}, read_only;
  for (const auto& edge : targets.outputs) {
    if (edge.is_valid()) (targets.accumulate_grad ? runs : read_only).insert(edge.function.get());
  }
  for (auto it = all.rbegin(); it != all.rend(); ++it) {  // children before parents
    for (const auto& edge : (*it)->next_edges()) {
      if (edge.is_valid() &&
          (runs.count(edge.function.get()) != 0 || read_only.count(edge.function.get()) != 0)) {
        runs.insert(it->get());
        break;
      }
    }
  }
  walk.pruned = true;
  walk.fed = runs;
  walk.fed.insert(read_only.begin(), read_only.end());
  for (NodePtr& n : all) {
    if (runs.count(n.get()) != 0) walk.order.push_back(std::move(n));
  }
}

// The gradients a replay returns: grad()'s outputs, then every retain_grad hook's input, with
// their identity in the cache key (node call ids are assigned by the walk, so they are stable).
void select_taps(GraphWalk& walk, const WalkTargets& targets) {
  auto id_of = [&](AgNode* node) {
    auto it = walk.compiler.node_calls.find(node);
    return it == walk.compiler.node_calls.end() ? std::string("-") : std::to_string(it->second.id);
  };
  if (!targets.accumulate_grad) {
    for (const auto& edge : targets.outputs) {
      AgNode* node = edge.is_valid() ? edge.function.get() : nullptr;
      walk.taps.push_back({node, edge.input_nr, nullptr});
      walk.taps_key += "grad " + id_of(node) + ":" + std::to_string(edge.input_nr) + ";";
    }
  }
  walk.grad_outputs = walk.taps.size();
  // Retain hooks run before a node does, and on grad()'s output nodes that do not run too (the
  // engine calls their tensor pre-hooks before it reads the captured gradient).
  std::vector<AgNode*> hooked;  // an opaque node runs its own retain_grad hooks
  for (size_t i = 0; i < walk.order.size(); ++i) {
    if (!walk.is_opaque(i)) hooked.push_back(walk.order[i].get());
  }
  if (!targets.accumulate_grad) {
    std::unordered_set<AgNode*> ran;  // opaque ones too: a node that runs calls its own hooks
    for (const NodePtr& n : walk.order) ran.insert(n.get());
    for (const auto& edge : targets.outputs) {
      AgNode* node = edge.is_valid() ? edge.function.get() : nullptr;
      if (node == nullptr || walk.fed.count(node) == 0 || ran.count(node) != 0) continue;
      if (std::find(hooked.begin(), hooked.end(), node) != hooked.end()) continue;  // listed twice
      const std::string hooks = check_capturable(*node, hooked.size(), walk.capturable_types);
      if (!hooks.empty()) {
        throw CaptureError(node_label(*node, hooked.size()) + ", a grad() output: " + hooks +
                           ", which capture does not support yet; remove them or run eager");
      }
      hooked.push_back(node);
    }
  }
  for (AgNode* n : hooked) {
    std::vector<size_t> slots;
    for (const auto& [slot, hook] : n->retains_grad_hooks()) slots.push_back(slot);
    std::sort(slots.begin(), slots.end());
    for (size_t slot : slots) {
      walk.taps.push_back({n, static_cast<uint32_t>(slot), n->retains_grad_hooks().at(slot).get()});
      walk.taps_key += "retain " + id_of(n) + ":" + std::to_string(slot) + ";";
    }
  }
}

}  // namespace

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

std::string node_label(const AgNode& node, size_t index) {
  return "node " + std::to_string(index) + " (" + node.name() + ")";
}

std::unique_ptr<GraphWalk> walk_from_root(NodePtr root, bool keys, const WalkTargets& targets,
                                          NodeOrder order, bool opaque) {
  auto walk = std::make_unique<GraphWalk>();
  walk->root = std::move(root);
  std::vector<NodePtr> all = order_nodes(walk->root, order);
  walk->compiler.node_calls.reserve(all.size());  // every node and edge target gets a call
  select_nodes(*walk, std::move(all), targets);
  collect_all(*walk, walk->order, keys, opaque);
  select_taps(*walk, targets);
  return walk;
}

std::string hook_reason(AgNode& node) {
  const std::type_info& type = typeid(node);
  // retain_grad hooks are kept: the walk taps their gradients (see select_taps).
  const char* hook = !node.tensor_pre_hooks().empty() ? "tensor pre-hooks"
                     : !node.pre_hooks().empty()      ? "pre-hooks"
                     : !node.post_hooks().empty()     ? "post-hooks"
                                                      : nullptr;
  if (hook != nullptr) return std::string("it has ") + hook;
  if (type == typeid(torch::autograd::AccumulateGrad) &&
      static_cast<torch::autograd::AccumulateGrad&>(node).tensor_post_acc_grad_hooks() != nullptr) {
    return "it has a post-accumulate-grad hook";
  }
  return "";
}

}  // namespace ca::detail
