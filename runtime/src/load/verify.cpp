// SPDX-License-Identifier: BSD-3-Clause
#include "load/verify.h"

#include <algorithm>
#include <string>
#include <utility>

#include "ca/error.h"
#include "ca/graph_validate.h"
#include "load/unneeded_outputs.h"

namespace ca::detail {
namespace {

// A functional node's result count is the count of its next edges, which is also the count of
// the metadata the validate_outputs right after it checks: provable from the graph alone.
void check_output_counts(const Graph& g) {
  for (size_t i = 0; i + 1 < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const Node& next = g.nodes[i + 1];
    if (n.kind != NodeKind::kFunctional || next.kind != NodeKind::kValidateOutputs) continue;
    const c10::ArrayRef<ValueId> outputs = g.ids(n.outputs);
    const c10::ArrayRef<ValueId> next_inputs = g.ids(next.inputs);
    bool reads_only_n = false;
    for (ValueId v : next_inputs) {
      if (v == kNoValue) continue;
      const bool from_n = std::find(outputs.begin(), outputs.end(), v) != outputs.end();
      reads_only_n = from_n;
      if (!from_n) break;
    }
    if (reads_only_n && next_inputs.size() != outputs.size()) {
      throw FormatError(node_path(g, i) + ": " + std::to_string(outputs.size()) +
                        " outputs, but the validate_outputs after it checks " +
                        std::to_string(next_inputs.size()));
    }
  }
}

// An opaque node calls a live autograd node only the trainer API that captured it holds.
void refuse_opaque_nodes(const Graph& g) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].kind == NodeKind::kOpaque) {
      throw FormatError(node_path(g, i) +
                        ": an opaque node (a live autograd node of the process that captured "
                        "it) in a graph loaded without ExecutorOptions::opaque_nodes");
    }
  }
}

}  // namespace

VerifiedGraph verify(Graph graph, const ExecutorOptions& options) {
  validate_graph(graph);
  if (!options.opaque_nodes) refuse_opaque_nodes(graph);
  VerifiedGraph v;
  v.bound =
      bind_ops(graph, options.allow_version_mismatch, options.max_tensor_elements, &v.schemas);
  check_unneeded_outputs(graph, v.bound);
  check_output_counts(graph);
  v.graph = std::move(graph);
  v.max_tensor_elements = options.max_tensor_elements;
  return v;
}

}  // namespace ca::detail
