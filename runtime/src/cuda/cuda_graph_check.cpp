// SPDX-License-Identifier: BSD-3-Clause
// What keeps a graph from being captured as one CUDA graph; decided at load, without CUDA.
#include <string>

#include "cuda/cuda_graph_replay.h"

namespace ca::detail {

std::string cuda_graph_refusal(const Graph& g, const DevicePlacement& p) {
  if (!p.target.is_cuda())
    return "a CUDA graph needs a CUDA device; replay is on " + p.target.str();
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    const GraphInput& in = g.inputs[k];
    const std::string at = "input " + std::to_string(k) + " (" + in.name + ")";
    if (in.kind != GraphInput::Kind::kTensor) {
      return at + " is a " + (in.kind == GraphInput::Kind::kInt ? "symbolic size" : "host scalar") +
             ", read on the host: a CUDA graph would bake in its captured value";
    }
    if (p.inputs[k].cpu_scalar && !p.inputs[k].moves) {
      return at + " is a CPU scalar that " + p.inputs[k].reason + " (a CUDA graph reads only " +
             p.target.str() + " memory)";
    }
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.kind == NodeKind::kOpaque) {
      return node_path(g, i) +
             " calls a live autograd node, whose code a CUDA graph cannot be "
             "trusted to hold (host work, syncs, hooks)";
    }
    if (n.kind != NodeKind::kFunctional) continue;
    for (const OpSchema& s : g.op_schemas) {
      if (s.op == g.op(n) && s.is_custom_function) {
        return node_path(g, i) + " runs custom function " + s.op +
               ", whose body a CUDA graph cannot be trusted to hold (host work, syncs)";
      }
    }
  }
  return "";
}

}  // namespace ca::detail
