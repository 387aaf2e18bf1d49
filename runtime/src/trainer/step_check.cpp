// SPDX-License-Identifier: BSD-3-Clause
#include "trainer/step_check.h"

#include <c10/util/flat_hash_map.h>

#include <algorithm>
#include <queue>
#include <string_view>

#include "leaf_lock.h"
#include "trainer/step_key.h"

namespace ca::detail {
namespace {

// On a node the walk captured: hooks other than retain_grad would make it opaque, retain_grad
// hooks would make the walk tap gradients, which this check does not record. Either way: not
// this check's graph.
bool has_hooks(AgNode& node) {
  return !hook_reason(node).empty() || !node.retains_grad_hooks().empty();
}

// Whether two collections of one saved tensor are the same data (a saved output unpacks to a
// new tensor each time, over the same storage).
bool same_data(const at::Tensor& a, const at::Tensor& b) {
  if (a.is_same(b)) return true;
  return a.defined() && b.defined() && a.has_storage() && b.has_storage() && a.is_alias_of(b) &&
         a.storage_offset() == b.storage_offset() && a.sizes() == b.sizes() &&
         a.strides() == b.strides() && a.dtype() == b.dtype();
}

}  // namespace

bool StepCheck::read(const std::vector<NodePtr>& live, StepTensors& tensors,
                     ReadBytes& bytes) const {
  NodeReader r(bytes, tensors);
  try {
    for (size_t i = 0; i < live.size() && r.ok(); ++i) {
      AgNode& node = *live[i];
      r.begin(live[i]);
      if (kinds_[i] == Kind::kCaptured) {
        if (has_hooks(node)) return false;
        const AccumulateGradLock lock(node);  // it reads the leaf's .grad
        readers_[i](node, r);
      } else {
        // An opaque node, keyed as collect_opaque keys it: type, input count, edges. One opaque
        // for its hooks stays one only while it has them (its retain_grad hooks it runs itself).
        if (kinds_[i] == Kind::kOpaqueWhileHooked && hook_reason(node).empty()) return false;
        r.collect(static_cast<uint64_t>(node.num_inputs()));
      }
      for (const auto& edge : node.next_edges()) {
        r.collect(edge.is_valid());
        if (edge.is_valid()) r.collect(edge.function->input_metadata(edge.input_nr));
      }
    }
  } catch (const c10::Error&) {
    return false;  // an unpack eager would refuse: the full walk reports it
  }
  return r.ok();
}

std::unique_ptr<const StepCheck> StepCheck::record(const GraphWalk& walk,
                                                   const std::vector<at::Tensor>& inputs,
                                                   const StepKey& key) {
  if (walk.pruned || !walk.taps.empty()) return nullptr;
  const std::vector<NodePtr>& order = walk.order;
  std::unique_ptr<StepCheck> check(new StepCheck());
  check->kinds_.assign(order.size(), Kind::kCaptured);
  for (size_t k = 0; k < walk.opaque.size(); ++k) {
    if (walk.opaque_why[k] == OpaqueWhy::kState) return nullptr;  // only compiled_args can tell
    check->kinds_[walk.opaque[k]] =
        walk.opaque_why[k] == OpaqueWhy::kHooks ? Kind::kOpaqueWhileHooked : Kind::kOpaqueByType;
  }
  check->opaque_ = walk.opaque;
  ska::flat_hash_map<const AgNode*, int32_t> position;
  for (size_t i = 0; i < order.size(); ++i) position.emplace(order[i].get(), i);
  check->deps_.assign(order.size(), 0);
  for (size_t i = 0; i < order.size(); ++i) {
    const NodePtr& node = order[i];
    const NodeReadFn read =
        check->kinds_[i] == Kind::kCaptured ? node_reader_for(typeid(*node)) : nullptr;
    if (read == nullptr && check->kinds_[i] == Kind::kCaptured) return nullptr;
    check->types_.push_back(&typeid(*node));
    check->readers_.push_back(read);
    for (const auto& edge : node->next_edges()) {
      if (!edge.is_valid()) {
        check->edges_.push_back({-1, 0});
        continue;
      }
      auto it = position.find(edge.function.get());
      if (it == position.end()) return nullptr;  // an unpruned walk runs every node it reaches
      check->edges_.push_back({it->second, edge.input_nr});
      ++check->deps_[static_cast<size_t>(it->second)];
    }
    check->edge_ends_.push_back(static_cast<uint32_t>(check->edges_.size()));
  }
  StepTensors tensors;
  ReadBytes recording(&check->bytes_);
  if (!check->read(order, tensors, recording)) return nullptr;
  check->read_bytes_ = check->bytes_.size();
  // The readers collect what compiled_args collected, so they find the captured graph's inputs
  // in its order; where they do not, the graph keeps the full walk rather than risk a wrong one.
  const std::vector<at::Tensor>& found = tensors.inputs();
  if (found.size() != inputs.size()) return nullptr;
  for (size_t i = 0; i < found.size(); ++i) {
    if (!same_data(found[i], inputs[i])) return nullptr;
  }
  append_tensor_metas(found, check->bytes_);
  // The same metadata as the key holds for the walk's inputs, byte for byte.
  const size_t nodes_end = key.node_ends.empty() ? 0 : key.node_ends.back();
  const size_t inputs_end = key.input_ends.empty() ? nodes_end : key.input_ends.back();
  if (std::string_view(check->bytes_).substr(check->read_bytes_) !=
      std::string_view(key.bytes).substr(nodes_end, inputs_end - nodes_end)) {
    return nullptr;
  }
  check->tensor_ids_ = tensors.ids();
  return check;
}

bool StepCheck::matches(const NodePtr& root, Step& step) const {
  if (!match(root, step)) {
    step.order.clear();  // a graph that is not this one is not held past the check
    return false;
  }
  return true;
}

bool StepCheck::match(const NodePtr& root, Step& step) const {
  const size_t n = types_.size();
  std::vector<NodePtr>& live = step.order;
  live.assign(n, NodePtr());
  live[0] = root;
  // The live nodes by position, found along the recorded edges (every node is reached from one
  // before it), with each node's type and edges checked on the way.
  for (size_t i = 0; i < n; ++i) {
    const NodePtr& node = live[i];
    if (!node || typeid(*node) != *types_[i]) return false;
    const auto& edges = node->next_edges();
    const uint32_t begin = i == 0 ? 0 : edge_ends_[i - 1];
    if (edges.size() != edge_ends_[i] - begin) return false;
    for (size_t k = 0; k < edges.size(); ++k) {
      const EdgeRef& ref = edges_[begin + k];
      const auto& edge = edges[k];
      if (!edge.is_valid()) {
        if (ref.target != -1) return false;
        continue;
      }
      if (ref.target < 0 || ref.input_nr != edge.input_nr) return false;
      NodePtr& slot = live[static_cast<size_t>(ref.target)];
      if (!slot) {
        slot = edge.function;
      } else if (slot.get() != edge.function.get()) {
        return false;
      }
    }
  }
  // Every position a different node: then the live graph has exactly the recorded edges.
  std::vector<const AgNode*> distinct;
  distinct.reserve(n);
  for (const NodePtr& node : live) distinct.push_back(node.get());
  std::sort(distinct.begin(), distinct.end());
  if (std::adjacent_find(distinct.begin(), distinct.end()) != distinct.end()) return false;
  // The engine's order (order_nodes' ready queue: the highest sequence number first) on these
  // nodes must be the recorded one: it decides the order of every gradient sum.
  std::vector<uint64_t> seq(n);
  for (size_t i = 0; i < n; ++i) seq[i] = live[i]->sequence_nr();
  auto runs_later = [&](uint32_t a, uint32_t b) { return seq[a] < seq[b]; };
  std::priority_queue<uint32_t, std::vector<uint32_t>, decltype(runs_later)> ready(runs_later);
  std::vector<uint32_t> deps = deps_;
  ready.push(0);
  uint32_t next = 0;
  while (!ready.empty()) {
    const uint32_t p = ready.top();
    ready.pop();
    if (p != next++) return false;
    for (uint32_t e = p == 0 ? 0 : edge_ends_[p - 1]; e < edge_ends_[p]; ++e) {
      const int32_t t = edges_[e].target;
      if (t >= 0 && --deps[static_cast<size_t>(t)] == 0) ready.push(static_cast<uint32_t>(t));
    }
  }
  if (next != n) return false;
  // What every node collects, which tensor each collection is, and the inputs' metadata.
  StepTensors tensors(tensor_ids_);
  ReadBytes compared(bytes_);
  if (!read(live, tensors, compared) || compared.position() != read_bytes_ || !tensors.complete()) {
    return false;
  }
  std::string metas;
  metas.reserve(bytes_.size() - read_bytes_);
  try {
    append_tensor_metas(tensors.inputs(), metas);
  } catch (const c10::Error&) {
    return false;  // a layout without strides, say: the full walk's key says what it says
  }
  if (std::string_view(bytes_).substr(read_bytes_) != metas) return false;
  step.inputs = std::move(tensors.inputs());
  return true;
}

}  // namespace ca::detail
