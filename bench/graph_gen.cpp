// SPDX-License-Identifier: BSD-3-Clause
#include "graph_gen.h"

#include <stdexcept>

#include "ca/version.h"

namespace ca::bench {

TrivialKind trivial_kind_from_name(const std::string& name) {
  if (name == "accumulate") return TrivialKind::kAccumulate;
  if (name == "functional") return TrivialKind::kFunctional;
  throw std::invalid_argument("unknown node kind '" + name + "' (accumulate, functional)");
}

Graph trivial_chain(size_t nodes, TrivialKind kind) {
  Graph g;
  g.torch_version = runtime_torch_version();
  GraphInput grad;
  grad.name = "grad_output.0";
  grad.meta.sizes = {1};
  g.inputs.push_back(grad);
  g.nodes.reserve(nodes);
  if (kind == TrivialKind::kFunctional) g.arg_pool.reserve(2 * nodes);  // a list and its bool
  ValueId prev = 0;
  for (size_t i = 0; i < nodes; ++i) {
    const ValueId next = static_cast<ValueId>(i + 1);
    Node n;
    if (kind == TrivialKind::kAccumulate) {
      n.kind = NodeKind::kAccumulate;
      n.inputs = g.add_ids({prev, 0});
    } else {
      n.kind = NodeKind::kFunctional;
      n.op = g.intern("NegBackward0");
      n.inputs = g.add_ids({prev});
      n.args =
          g.arg_pool.append({Arg::list(ArgType{ArgType::Kind::kBool, {}}, {Arg::boolean(true)})});
    }
    n.outputs = g.add_ids({next});
    g.nodes.push_back(n);
    prev = next;
  }
  g.num_values = static_cast<int32_t>(nodes + 1);
  g.outputs = {prev};
  if (kind == TrivialKind::kFunctional) {  // as capture records it: NegBackward0(bool[]), 1 flag
    OpSchema neg;
    neg.op = "NegBackward0";
    neg.args.push_back(ArgType{ArgType::Kind::kList, {ArgType{ArgType::Kind::kBool, {}}}});
    neg.needs_input_grad_count = 1;
    g.op_schemas.push_back(std::move(neg));
  }
  return g;
}

}  // namespace ca::bench
