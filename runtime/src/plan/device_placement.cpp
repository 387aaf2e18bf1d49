// SPDX-License-Identifier: BSD-3-Clause
// Device placement at load: the graph's home device, the retargeting of its recorded devices,
// and upstream's cpu-scalar movement rule (see ca/device_placement.h).
#include "ca/device_placement.h"

#include <optional>
#include <string_view>

#include "ca/error.h"

namespace ca {
namespace {

bool is_cpu_scalar(const GraphInput& in) {
  return in.kind == GraphInput::Kind::kTensor && in.meta.sizes.empty() && in.meta.device.is_cpu();
}

// The one device the non-scalar tensor inputs were recorded on (CPU when there are none).
c10::Device home_device(const Graph& g) {
  std::optional<c10::Device> home;
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    const GraphInput& in = g.inputs[k];
    if (in.kind != GraphInput::Kind::kTensor || is_cpu_scalar(in)) continue;
    if (home && *home != in.meta.device) {
      throw InputError("input " + std::to_string(k) + " (" + in.name + ") was recorded on " +
                       in.meta.device.str() + " but others on " + home->str() +
                       ": only a graph recorded on one device can be retargeted");
    }
    home = in.meta.device;
  }
  return home.value_or(c10::Device(c10::kCPU));
}

bool reads(const Graph& g, const Node& n, ValueId v) {
  if (!g.holds(n.inputs)) return true;  // not validated yet: a malformed graph fails later
  for (ValueId in : g.ids(n.inputs)) {
    if (in == v) return true;
  }
  return !g.arg_pool.holds(n.args) || !for_each_ref(g.args(n), [v](const ArgRef& ref) {
    return ref.kind() != Arg::Kind::kTensor || ref.ref() != v;
  });
}

bool is_custom_function(const Graph& g, std::string_view op) {
  for (const OpSchema& s : g.op_schemas) {
    if (s.op == op) return s.is_custom_function;
  }
  return false;
}

// Why node `i` keeps a CPU scalar on CPU, or "" when it does not (upstream: aten/prims ops and
// built-in functional ops accept a CUDA 0-dim tensor where a CPU one was recorded).
std::string blocker(const Graph& g, size_t i, bool home_is_cuda) {
  const Node& n = g.nodes[i];
  switch (n.kind) {
    case NodeKind::kFunctional:
      return is_custom_function(g, g.op(n)) ? "read by " + node_path(g, i) + ", a custom function"
                                            : "";
    case NodeKind::kAten: {
      const std::string_view op = g.op(n);
      const bool builtin = op.rfind("aten::", 0) == 0 || op.rfind("prims::", 0) == 0;
      return builtin ? "" : "read by " + node_path(g, i) + ", not an aten/prims op";
    }
    case NodeKind::kAccumulateGrad:
      // A CPU parameter of a CUDA graph keeps its .grad on CPU; a graph recorded on CPU moves
      // as a whole, as model.to(device) would.
      return home_is_cuda ? "a CPU parameter whose .grad " + node_path(g, i) + " writes" : "";
    case NodeKind::kOpaque:
      return "read by " + node_path(g, i) + ", a live autograd node";
    default:
      return "";
  }
}

InputPlacement place_scalar(const Graph& g, size_t k, c10::Device target, bool has_cuda,
                            bool home_is_cuda) {
  InputPlacement p;
  p.cpu_scalar = true;
  if (!has_cuda) {
    p.reason = "stays: the graph has no CUDA inputs on " + target.str();
    return p;
  }
  size_t users = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!reads(g, g.nodes[i], static_cast<ValueId>(k))) continue;
    ++users;
    const std::string why = blocker(g, i, home_is_cuda);
    if (!why.empty()) {
      p.reason = "stays on cpu: " + why;
      return p;
    }
  }
  p.moves = true;
  p.device = target;
  p.reason = "moves to " + target.str() + ": " +
             (users == 0 ? std::string("no node reads it")
                         : "every user is built-in (" + std::to_string(users) + ")");
  return p;
}

// Every device arg of the pool, nested ones included, each record once.
void retarget_args(ArgPool& pool, c10::Device home, c10::Device target) {
  for (uint32_t k = 0; k < pool.records(); ++k) {
    const ArgRef a = pool.ref(k);
    if (a.kind() != Arg::Kind::kDevice) continue;
    // Raw fields, not a c10::Device: the graph is not validated yet, and c10 asserts on odd
    // indices. An unindexed device stands for any index of its type.
    const bool same =
        a.i() == static_cast<int64_t>(home.type()) &&
        (a.device_index() < 0 || !home.has_index() || a.device_index() == home.index());
    if (same) pool.set_device(k, static_cast<int64_t>(target.type()), target.index());
  }
}

}  // namespace

std::vector<size_t> DevicePlacement::kept_scalars() const {
  std::vector<size_t> kept;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (inputs[k].cpu_scalar && !inputs[k].moves) kept.push_back(k);
  }
  return kept;
}

DevicePlacement place_graph(const Graph& g, c10::Device target) {
  DevicePlacement p;
  p.target = target;
  p.home = home_device(g);
  p.inputs.resize(g.inputs.size());
  bool has_cuda = false;
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    const GraphInput& in = g.inputs[k];
    if (in.kind != GraphInput::Kind::kTensor) continue;  // sizes and scalars read on the host
    // A graph recorded on CPU moves as a whole: its 0-dim tensors are CPU scalars only in the
    // sense of the rule, decided below.
    if (is_cpu_scalar(in)) continue;
    p.inputs[k].device = in.meta.device == p.home ? target : in.meta.device;
    has_cuda = has_cuda || p.inputs[k].device.is_cuda();
  }
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    if (!is_cpu_scalar(g.inputs[k])) continue;
    p.inputs[k] = place_scalar(g, k, target, has_cuda, p.home.is_cuda());
    ++(p.inputs[k].moves ? p.scalars_moved : p.scalars_kept);
  }
  return p;
}

Graph retarget_graph(Graph g, const DevicePlacement& p) {
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    if (g.inputs[k].kind == GraphInput::Kind::kTensor) g.inputs[k].meta.device = p.inputs[k].device;
  }
  if (p.home == p.target) return g;
  retarget_args(g.arg_pool, p.home, p.target);
  return g;
}

std::string describe_scalars(const Graph& g, const DevicePlacement& p) {
  std::string text;
  for (size_t k = 0; k < p.inputs.size(); ++k) {
    if (!p.inputs[k].cpu_scalar) continue;
    text +=
        "input " + std::to_string(k) + " (" + g.inputs[k].name + "): " + p.inputs[k].reason + "\n";
  }
  return text;
}

}  // namespace ca
