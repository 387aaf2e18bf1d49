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

}  // namespace

VerifiedGraph verify(Graph graph, bool allow_version_mismatch, int64_t max_tensor_elements) {
  validate_graph(graph);
  VerifiedGraph v;
  v.bound = bind_ops(graph, allow_version_mismatch, max_tensor_elements, &v.schemas);
  check_unneeded_outputs(graph, v.bound);
  check_output_counts(graph);
  v.graph = std::move(graph);
  v.max_tensor_elements = max_tensor_elements;
  return v;
}

}  // namespace ca::detail
