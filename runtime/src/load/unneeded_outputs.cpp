// SPDX-License-Identifier: BSD-3-Clause
#include "load/unneeded_outputs.h"

#include <string>

#include "ca/error.h"

namespace ca::detail {
namespace {

void mark_refs(const ArgRefs& args, std::vector<bool>& read) {
  for_each_ref(args, [&read](const ArgRef& ref) {
    if (ref.kind() == Arg::Kind::kTensor && static_cast<size_t>(ref.ref()) < read.size()) {
      read[static_cast<size_t>(ref.ref())] = true;
    }
    return true;
  });
}

// Every value whose content something uses: a node that reads it (as an input or inside its
// args) or the graph's outputs. validate_outputs passes its inputs through (capture validates
// every output a node returns, used or not): its input k counts as used when its output k does.
// Nodes come in execution order, so walking them backwards sees every reader before the value.
std::vector<bool> used_values(const Graph& graph) {
  std::vector<bool> used(static_cast<size_t>(graph.num_values), false);
  auto valid = [&](ValueId v) { return v >= 0 && static_cast<size_t>(v) < used.size(); };
  for (ValueId v : graph.outputs) {
    if (valid(v)) used[v] = true;
  }
  for (auto it = graph.nodes.rbegin(); it != graph.nodes.rend(); ++it) {
    const Node& n = *it;
    const bool passes_through = n.kind == NodeKind::kValidateOutputs;
    const c10::ArrayRef<ValueId> inputs = graph.ids(n.inputs);
    const c10::ArrayRef<ValueId> outputs = graph.ids(n.outputs);
    for (size_t k = 0; k < inputs.size(); ++k) {
      const ValueId v = inputs[k];
      if (!valid(v)) continue;
      // A validate_outputs passes input k through to output k: used when that output is.
      if (!passes_through || (k < outputs.size() && valid(outputs[k]) && used[outputs[k]])) {
        used[v] = true;
      }
    }
    mark_refs(graph.args(n), used);
  }
  return used;
}

}  // namespace

void check_unneeded_outputs(const Graph& graph, const std::vector<BoundNode>& bound) {
  const std::vector<bool> used = used_values(graph);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    const auto* call = std::get_if<OpCall>(&bound[i]);
    if (n.kind != NodeKind::kFunctional || call == nullptr || call->op == nullptr ||
        call->op->needs_input_grad_count < 0 || call->args.empty() || !call->args[0].isBoolList()) {
      continue;
    }
    const c10::List<bool> flags = call->args[0].toBoolList();
    const c10::ArrayRef<ValueId> outputs = graph.ids(n.outputs);
    if (flags.size() != outputs.size()) continue;
    for (size_t k = 0; k < flags.size(); ++k) {
      const ValueId v = outputs[k];
      if (flags.get(k) || v < 0 || !used[v]) continue;
      throw FormatError(node_path(graph, i) + ".outputs[" + std::to_string(k) + "]: value %" +
                        std::to_string(v) + " is used, but needs_input_grad[" + std::to_string(k) +
                        "] is false: the op never computes it");
    }
  }
}

}  // namespace ca::detail
