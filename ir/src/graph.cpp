// SPDX-License-Identifier: BSD-3-Clause
#include "ca/graph.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace ca {

void Graph::set_args(size_t i, const std::vector<Arg>& args) {
  const ArgRange old = nodes.at(i).args;
  const auto shares = [&](const Node& n) {
    return &n != &nodes[i] && n.args.size > 0 && old.size > 0 &&
           n.args.first < old.first + old.size && old.first < n.args.first + n.args.size;
  };
  if (std::any_of(nodes.begin(), nodes.end(), shares)) {  // a copied node reads them too
    nodes[i].args = arg_pool.append(args);
    return;
  }
  const ArgRange fresh = arg_pool.replace(old, args);
  nodes[i].args = fresh;
  for (Node& n : nodes) {
    if (&n != &nodes[i] && n.args.first >= old.first + old.size) {
      n.args.first = n.args.first - old.size + fresh.size;
    }
  }
}

c10::ArrayRef<ValueId> Graph::ids(IdRange r) const {
  if (!holds(r)) {
    throw std::out_of_range("ca::Graph::ids: range [" + std::to_string(r.first) + ", +" +
                            std::to_string(r.size) + ") outside the " +
                            std::to_string(value_ids.size()) + " value ids");
  }
  return {value_ids.data() + r.first, r.size};
}

ValueId& Graph::id(IdRange r, size_t k) {
  if (k >= r.size) throw std::out_of_range("ca::Graph::id: index past the range");
  (void)ids(r);  // range check
  return value_ids[r.first + k];
}

IdRange Graph::add_ids(c10::ArrayRef<ValueId> ids) {
  if (value_ids.size() + ids.size() > UINT32_MAX) {
    throw std::length_error("ca::Graph: more than 2^32 - 1 value ids");
  }
  const std::vector<ValueId> copy(ids.begin(), ids.end());  // `ids` may view value_ids itself
  const IdRange r{static_cast<uint32_t>(value_ids.size()), static_cast<uint32_t>(copy.size())};
  value_ids.insert(value_ids.end(), copy.begin(), copy.end());
  return r;
}

NameId Graph::intern(std::string_view name) {
  if (names_.empty()) {  // a moved-from graph: 0 stays the empty name
    names_.emplace_back();
    name_ids_.emplace("", 0);
  }
  if (const auto it = name_ids_.find(name); it != name_ids_.end()) return it->second;
  if (names_.size() >= UINT32_MAX) throw std::length_error("ca::Graph: more than 2^32 - 1 names");
  const auto id = static_cast<NameId>(names_.size());
  names_.emplace_back(name);
  name_ids_.emplace(names_.back(), id);
  return id;
}

Node Graph::make_node(NodeKind kind, std::string_view op, c10::ArrayRef<ValueId> inputs,
                      const std::vector<Arg>& args, c10::ArrayRef<ValueId> outputs) {
  // Both may view value_ids, and `op` the name table: copied before either grows.
  const std::vector<ValueId> outs(outputs.begin(), outputs.end());
  Node n;
  n.kind = kind;
  n.op = intern(std::string(op));
  n.inputs = add_ids(inputs);
  n.args = arg_pool.append(args);
  n.outputs = add_ids(outs);
  return n;
}

bool Graph::node_equal(size_t i, const Graph& o, size_t j) const {
  const Node& a = nodes.at(i);
  const Node& b = o.nodes.at(j);
  // A range outside its graph's tables equals nothing (a graph never validated).
  const auto same_ids = [&](IdRange x, IdRange y) {
    return holds(x) && o.holds(y) && ids(x) == o.ids(y);
  };
  return a.kind == b.kind && has_name(a.op) && o.has_name(b.op) && op(a) == o.op(b) &&
         has_name(a.overload) && o.has_name(b.overload) && overload(a) == o.overload(b) &&
         same_ids(a.inputs, b.inputs) && same_ids(a.outputs, b.outputs) && arg_pool.holds(a.args) &&
         o.arg_pool.holds(b.args) && args(a) == o.args(b);
}

bool Graph::operator==(const Graph& o) const {
  if (format_version != o.format_version || torch_version != o.torch_version ||
      num_values != o.num_values || inputs != o.inputs || nodes.size() != o.nodes.size() ||
      outputs != o.outputs || op_schemas != o.op_schemas) {
    return false;
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!node_equal(i, o, i)) return false;
  }
  return true;
}

const char* node_kind_name(NodeKind kind) {
  switch (kind) {
    case NodeKind::kFunctional:
      return "functional";
    case NodeKind::kValidateOutputs:
      return "validate_outputs";
    case NodeKind::kAccumulate:
      return "accumulate";
    case NodeKind::kAccumulateGrad:
      return "accumulate_grad";
    case NodeKind::kCopySlicesPrologue:
      return "copy_slices_prologue";
    case NodeKind::kCopySlicesEpilogue:
      return "copy_slices_epilogue";
    case NodeKind::kAten:
      return "aten";
    case NodeKind::kOpaque:
      return "opaque";
  }
  return "unknown";
}

std::string node_path(const Graph& graph, size_t i) {
  const Node& n = graph.nodes[i];
  std::string path = "nodes[" + std::to_string(i) + "] (" + node_kind_name(n.kind);
  if (n.kind == NodeKind::kValidateOutputs) {
    if (i > 0 && !graph.op(graph.nodes[i - 1]).empty()) {
      path += " of " + std::string(graph.op(graph.nodes[i - 1]));
    }
  } else if (!graph.op(n).empty()) {
    path += " " + std::string(graph.op(n));
  }
  return path + ")";
}

std::vector<size_t> grad_targets(const Graph& graph) {
  std::vector<size_t> targets;
  for (const Node& n : graph.nodes) {
    if (n.kind != NodeKind::kAccumulateGrad || n.inputs.size == 0 || !graph.holds(n.inputs)) {
      continue;
    }
    const auto k = static_cast<size_t>(graph.ids(n.inputs)[0]);
    if (std::find(targets.begin(), targets.end(), k) == targets.end()) targets.push_back(k);
  }
  return targets;
}

}  // namespace ca
