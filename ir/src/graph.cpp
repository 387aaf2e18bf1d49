// SPDX-License-Identifier: BSD-3-Clause
#include "ca/graph.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
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

bool Graph::node_equal(size_t i, const Graph& o, size_t j) const {
  const Node& a = nodes.at(i);
  const Node& b = o.nodes.at(j);
  return a.kind == b.kind && a.op == b.op && a.overload == b.overload && a.inputs == b.inputs &&
         a.outputs == b.outputs && args(a) == o.args(b);
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
  }
  return "unknown";
}

std::string node_path(const Graph& graph, size_t i) {
  const Node& n = graph.nodes[i];
  std::string path = "nodes[" + std::to_string(i) + "] (" + node_kind_name(n.kind);
  if (n.kind == NodeKind::kValidateOutputs) {
    if (i > 0 && !graph.nodes[i - 1].op.empty()) path += " of " + graph.nodes[i - 1].op.str();
  } else if (!n.op.empty()) {
    path += " " + n.op.str();
  }
  return path + ")";
}

std::vector<size_t> grad_targets(const Graph& graph) {
  std::vector<size_t> targets;
  for (const Node& n : graph.nodes) {
    if (n.kind != NodeKind::kAccumulateGrad || n.inputs.empty()) continue;
    const auto k = static_cast<size_t>(n.inputs[0]);
    if (std::find(targets.begin(), targets.end(), k) == targets.end()) targets.push_back(k);
  }
  return targets;
}

}  // namespace ca
