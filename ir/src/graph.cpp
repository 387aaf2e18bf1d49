// SPDX-License-Identifier: BSD-3-Clause
#include "ca/graph.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

namespace ca {

bool Arg::operator==(const Arg& o) const {
  // Doubles compare by bits so that NaN payloads round-trip as equal.
  uint64_t bits = 0, other_bits = 0;
  std::memcpy(&bits, &d, sizeof d);
  std::memcpy(&other_bits, &o.d, sizeof d);
  return kind == o.kind && b == o.b && i == o.i && bits == other_bits && c == o.c && s == o.s &&
         device_index == o.device_index && ref == o.ref && type == o.type &&
         value_type == o.value_type && items == o.items;
}

Arg Arg::boolean(bool v) {
  Arg a;
  a.kind = Kind::kBool;
  a.b = v;
  return a;
}

Arg Arg::integer(int64_t v, Kind kind) {
  Arg a;
  a.kind = kind;
  a.i = v;
  return a;
}

Arg Arg::real(double v) {
  Arg a;
  a.kind = Kind::kDouble;
  a.d = v;
  return a;
}

Arg Arg::string(const std::string& v) {
  Arg a;
  a.kind = Kind::kString;
  a.s = v;
  return a;
}

Arg Arg::tensor(ValueId id) {
  Arg a;
  a.kind = Kind::kTensor;
  a.ref = id;
  return a;
}

Arg Arg::list(ArgType elem, std::vector<Arg> items) {
  Arg a;
  a.kind = Kind::kList;
  a.type = std::move(elem);
  a.items = std::move(items);
  return a;
}

Arg Arg::tuple(std::vector<Arg> items) {
  Arg a;
  a.kind = Kind::kTuple;
  a.items = std::move(items);
  return a;
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
