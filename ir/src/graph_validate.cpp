// SPDX-License-Identifier: BSD-3-Clause
// The semantic pass over a graph: every rule graph.h states, checked before anything runs it.
#include "ca/graph_validate.h"

#include <c10/core/DeviceType.h>
#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>

#include <limits>
#include <string>
#include <vector>

#include "ca/error.h"
#include "ca/field_path.h"

namespace ca {
namespace {

/// Deepest nesting of args and arg types accepted (real packed args nest a few levels).
constexpr int kMaxArgDepth = 32;
/// Definition site of a value that no node defines.
constexpr int kNotDefined = std::numeric_limits<int>::max();
/// Definition site of a graph input.
constexpr int kGraphInput = -1;

std::string range(int64_t lo, int64_t hi) {
  return "[" + std::to_string(lo) + ", " + std::to_string(hi) + ")";
}

void check_in_range(int64_t v, int64_t hi, const FieldPath& path, const char* what) {
  if (v < 0 || v >= hi) {
    throw FormatError(path + ": " + what + " " + std::to_string(v) + " out of range " +
                      range(0, hi));
  }
}

template <typename E>
void check_enum(E kind, E last, const FieldPath& path) {
  check_in_range(static_cast<int64_t>(kind), static_cast<int64_t>(last) + 1, path, "kind");
}

/// Which of a node's inputs may be kNoValue (an undefined tensor).
bool input_may_be_undefined(NodeKind kind, size_t i) {
  switch (kind) {
    case NodeKind::kFunctional:
    case NodeKind::kValidateOutputs:
    case NodeKind::kAccumulate:
    case NodeKind::kOpaque:
      return true;
    case NodeKind::kAccumulateGrad:
      return i == 1;  // the grad, not the variable
    case NodeKind::kCopySlicesEpilogue:
      return i >= 2;  // the inner node's results
    case NodeKind::kCopySlicesPrologue:
    case NodeKind::kAten:
      return false;
  }
  return false;
}

void check_count(size_t got, size_t want, const FieldPath& path, const char* what) {
  if (got != want) {
    throw FormatError(path + ": " + std::to_string(got) + " " + what + ", expected " +
                      std::to_string(want));
  }
}

/// Arity and fixed arg shapes of the built-in node kinds.
void check_arity(const Graph& g, const Node& n, const FieldPath& path) {
  const ArgRefs args = g.args(n);
  switch (n.kind) {
    case NodeKind::kFunctional:
    case NodeKind::kAten:
      if (g.op(n).empty()) throw FormatError(path + ".op: empty op name");
      break;
    case NodeKind::kOpaque:
      if (g.op(n).empty()) throw FormatError(path + ".op: empty node name");
      check_count(args.size(), 0, path(".args"), "args");
      break;
    case NodeKind::kValidateOutputs:
      check_count(args.size(), 1, path(".args"), "args");
      check_count(n.outputs.size, n.inputs.size, path(".outputs"), "outputs for as many inputs");
      break;
    case NodeKind::kAccumulate:
      check_count(n.inputs.size, 2, path(".inputs"), "inputs");
      check_count(n.outputs.size, 1, path(".outputs"), "outputs");
      break;
    case NodeKind::kAccumulateGrad:
      check_count(n.inputs.size, 2, path(".inputs"), "inputs");
      check_count(n.outputs.size, 0, path(".outputs"), "outputs");
      check_count(args.size(), 1, path(".args"), "args");
      if (args[0].kind() != Arg::Kind::kBool) {
        throw FormatError(path + ".args[0]: has_post_hooks must be a bool");
      }
      break;
    case NodeKind::kCopySlicesPrologue:
      check_count(n.inputs.size, 1, path(".inputs"), "inputs");
      check_count(n.outputs.size, 3, path(".outputs"), "outputs");
      check_count(args.size(), 2, path(".args"), "args");
      break;
    case NodeKind::kCopySlicesEpilogue:
      if (n.inputs.size < 2) {
        throw FormatError(path + ".inputs: " + std::to_string(n.inputs.size) +
                          " inputs, expected at least 2 (result, grad_slice, res...)");
      }
      check_count(args.size(), 1, path(".args"), "args");
      break;
  }
}

void check_arg_type(const ArgType& t, const FieldPath& path, int depth) {
  if (depth > kMaxArgDepth) {
    throw FormatError(path + ": nested deeper than " + std::to_string(kMaxArgDepth));
  }
  check_enum(t.kind, ArgType::Kind::kDict, path(".kind"));
  size_t want = 0;
  switch (t.kind) {
    case ArgType::Kind::kOptional:
    case ArgType::Kind::kList:
      want = 1;
      break;
    case ArgType::Kind::kDict:
      want = 2;
      break;
    case ArgType::Kind::kTuple:
      want = t.contained.size();
      break;
    default:
      break;
  }
  check_count(t.contained.size(), want, path(".contained"), "contained types");
  for (size_t i = 0; i < t.contained.size(); ++i) {
    check_arg_type(t.contained[i], path(".contained", i), depth + 1);
  }
}

/// Walks the graph in execution order and checks every value use against its definition.
class Validator {
 public:
  explicit Validator(const Graph& g) : g_(g) {}
  void run();

 private:
  void check_header();
  void check_input(size_t i);
  void check_tables(size_t n);
  void collect_definitions();
  void check_node(size_t n);
  void check_use(ValueId id, int node, const FieldPath& path, bool may_be_undefined);
  void check_arg(const ArgRef& a, int node, const FieldPath& path, int depth);
  void check_payload(const ArgRef& a, const FieldPath& path);
  void check_op_schemas();

  const Graph& g_;
  std::vector<int> def_site_;  ///< per value id: kGraphInput, a node index, or kNotDefined
};

void Validator::run() {
  check_header();
  for (size_t i = 0; i < g_.inputs.size(); ++i) check_input(i);
  collect_definitions();
  for (size_t n = 0; n < g_.nodes.size(); ++n) check_node(n);
  const int end = static_cast<int>(g_.nodes.size());
  for (size_t i = 0; i < g_.outputs.size(); ++i) {
    check_use(g_.outputs[i], end, FieldPath("outputs", i), /*may_be_undefined=*/true);
  }
  check_op_schemas();
}

// One schema per op name, in name order, so that a lookup is a binary search and a file has one
// canonical form. Whether every functional op has one is the op-binding step's check.
void Validator::check_op_schemas() {
  for (size_t i = 0; i < g_.op_schemas.size(); ++i) {
    const OpSchema& o = g_.op_schemas[i];
    const FieldPath path("op_schemas", i);
    if (o.op.empty()) throw FormatError(path + ".op: empty op name");
    if (i > 0 && !(g_.op_schemas[i - 1].op < o.op)) {
      throw FormatError(path + ".op: '" + o.op + "' is not after '" + g_.op_schemas[i - 1].op +
                        "' (schemas must be unique and sorted by op name)");
    }
    if (o.needs_input_grad_count < -1) {
      throw FormatError(path + ".needs_input_grad_count: " +
                        std::to_string(o.needs_input_grad_count) + " is below -1");
    }
    for (size_t k = 0; k < o.args.size(); ++k) check_arg_type(o.args[k], path(".args", k), 0);
  }
}

void Validator::check_header() {
  const size_t inputs = g_.inputs.size();
  size_t slots = 0;
  for (size_t n = 0; n < g_.nodes.size(); ++n) {
    check_tables(n);
    slots += g_.nodes[n].outputs.size;
  }
  const size_t max_values = static_cast<size_t>(std::numeric_limits<ValueId>::max());
  if (inputs > max_values || slots > max_values - inputs) {
    throw FormatError("graph: " + std::to_string(inputs) + " inputs and " + std::to_string(slots) +
                      " node outputs exceed the value id range");
  }
  // Bounds num_values before anything is sized by it.
  if (g_.num_values < static_cast<int64_t>(inputs) ||
      g_.num_values > static_cast<int64_t>(inputs) + static_cast<int64_t>(slots)) {
    throw FormatError(
        "num_values: " + std::to_string(g_.num_values) + " out of range " +
        range(static_cast<int64_t>(inputs), static_cast<int64_t>(inputs + slots) + 1) + " (" +
        std::to_string(inputs) + " inputs, " + std::to_string(slots) + " node output slots)");
  }
}

/// A node's names and id ranges lie in the graph's tables (what the reader builds always does;
/// a graph built in memory may not).
void Validator::check_tables(size_t n) {
  const Node& node = g_.nodes[n];
  const FieldPath path("nodes", n);
  for (const auto& [name, id] :
       {std::pair{".op", node.op}, std::pair{".overload", node.overload}}) {
    if (!g_.has_name(id)) {
      throw FormatError(path + name + ": name id " + std::to_string(id) +
                        " is not in the graph's name table");
    }
  }
  for (const auto& [name, r] :
       {std::pair{".inputs", node.inputs}, std::pair{".outputs", node.outputs}}) {
    if (!g_.holds(r)) {
      throw FormatError(path + name + ": range [" + std::to_string(r.first) + ", +" +
                        std::to_string(r.size) + ") is not a range of the " +
                        std::to_string(g_.value_ids.size()) + " value ids");
    }
  }
}

void Validator::check_input(size_t i) {
  const GraphInput& in = g_.inputs[i];
  const FieldPath path("inputs", i);
  check_enum(in.kind, GraphInput::Kind::kDouble, path(".kind"));
  if (in.kind != GraphInput::Kind::kTensor) return;
  check_in_range(static_cast<int>(in.meta.dtype), static_cast<int>(c10::ScalarType::Undefined),
                 path(".meta.dtype"), "scalar type");
  if (!c10::isValidDeviceType(in.meta.device.type()) || in.meta.device.index() < -1) {
    throw FormatError(path + ".meta.device: not a valid device");
  }
  // Load-time inference makes meta tensors of these sizes; torch multiplies them unchecked.
  int64_t numel = 1;
  for (int64_t size : in.meta.sizes) {
    if (size == kDynamicSize) continue;  // any size, checked against the bound tensor per run
    if (size < 0 || __builtin_mul_overflow(numel, size, &numel)) {
      throw FormatError(path + ".meta.sizes: a negative size, or more elements than int64 holds");
    }
  }
}

/// Checks each node's kind and arity, then records where each value id is defined.
void Validator::collect_definitions() {
  def_site_.assign(static_cast<size_t>(g_.num_values), kNotDefined);
  for (size_t i = 0; i < g_.inputs.size(); ++i) def_site_[i] = kGraphInput;
  for (size_t n = 0; n < g_.nodes.size(); ++n) {
    const Node& node = g_.nodes[n];
    const FieldPath path("nodes", n);
    check_enum(node.kind, NodeKind::kOpaque, path(".kind"));
    if (!g_.arg_pool.holds(node.args)) {
      throw FormatError(path + ".args: range [" + std::to_string(node.args.first) + ", +" +
                        std::to_string(node.args.size) + ") of " + std::to_string(node.args.count) +
                        " args is not a range of the arg pool (" +
                        std::to_string(g_.arg_pool.records()) + " records)");
    }
    check_arity(g_, node, path);
    const c10::ArrayRef<ValueId> outs = g_.ids(node.outputs);
    for (size_t k = 0; k < outs.size(); ++k) {
      const ValueId id = outs[k];
      if (id == kNoValue) continue;
      const FieldPath output = path(".outputs", k);
      check_in_range(id, g_.num_values, output, "value id");
      const int site = def_site_[static_cast<size_t>(id)];
      if (site != kNotDefined) {
        throw FormatError(output + ": value id " + std::to_string(id) + " already defined by " +
                          (site == kGraphInput
                               ? FieldPath("inputs", static_cast<size_t>(id)).str()
                               : FieldPath("nodes", static_cast<size_t>(site)).str()));
      }
      def_site_[static_cast<size_t>(id)] = static_cast<int>(n);
    }
  }
  for (size_t id = g_.inputs.size(); id < def_site_.size(); ++id) {
    if (def_site_[id] == kNotDefined) {
      throw FormatError("num_values: " + std::to_string(g_.num_values) + " but value id " +
                        std::to_string(id) + " is defined by no node");
    }
  }
}

void Validator::check_node(size_t n) {
  const Node& node = g_.nodes[n];
  const FieldPath path("nodes", n);
  const int index = static_cast<int>(n);
  const c10::ArrayRef<ValueId> inputs = g_.ids(node.inputs);
  for (size_t k = 0; k < inputs.size(); ++k) {
    check_use(inputs[k], index, path(".inputs", k), input_may_be_undefined(node.kind, k));
  }
  size_t k = 0;
  for (ArgRef a : g_.args(node)) check_arg(a, index, path(".args", k++), 1);
  if (node.kind == NodeKind::kAccumulateGrad) {
    const ValueId var = inputs[0];
    if (var >= static_cast<ValueId>(g_.inputs.size())) {
      throw FormatError(path + ".inputs[0]: value id " + std::to_string(var) +
                        " is not a graph input; accumulate_grad writes into a parameter input");
    }
    // Eager gives only leaves that require grad an AccumulateGrad; a bound tensor may have lost
    // the flag (read back from a .pt file), so the recorded one decides.
    const GraphInput& in = g_.inputs[static_cast<size_t>(var)];
    if (in.kind != GraphInput::Kind::kTensor || !in.meta.requires_grad) {
      throw FormatError(path + ".inputs[0]: graph input " + std::to_string(var) + " (" + in.name +
                        ") was not recorded as a tensor requiring grad; accumulate_grad writes " +
                        "only into those");
    }
  }
}

void Validator::check_use(ValueId id, int node, const FieldPath& path, bool may_be_undefined) {
  if (id == kNoValue && may_be_undefined) return;
  check_in_range(id, g_.num_values, path, "value id");
  const int site = def_site_[static_cast<size_t>(id)];
  if (site >= node) {
    throw FormatError(path + ": value id " + std::to_string(id) +
                      " used before its definition by " +
                      FieldPath("nodes", static_cast<size_t>(site)).str());
  }
  if (site == kGraphInput && g_.inputs[static_cast<size_t>(id)].kind != GraphInput::Kind::kTensor) {
    throw FormatError(path + ": value id " + std::to_string(id) + " is the scalar input '" +
                      g_.inputs[static_cast<size_t>(id)].name + "', expected a tensor");
  }
}

void Validator::check_arg(const ArgRef& a, int node, const FieldPath& path, int depth) {
  if (depth > kMaxArgDepth) {
    throw FormatError(path + ": args nested deeper than " + std::to_string(kMaxArgDepth));
  }
  check_enum(a.kind(), Arg::Kind::kDict, path(".kind"));
  check_payload(a, path);
  if (a.kind() == Arg::Kind::kTensor) check_use(a.ref(), node, path(".ref"), true);
  if (a.kind() == Arg::Kind::kList || a.kind() == Arg::Kind::kDict) {
    check_arg_type(a.type(), path(".type"), depth + 1);
  }
  const ArgRefs items = a.items();
  if (a.kind() == Arg::Kind::kDict) {
    check_arg_type(a.value_type(), path(".value_type"), depth + 1);
    if (items.size() % 2 != 0) {
      throw FormatError(path + ".items: " + std::to_string(items.size()) +
                        " items, a dict needs key/value pairs");
    }
  }
  // An arg that is not a container holds no items: the pool keeps none (ArgPool::append).
  size_t i = 0;
  for (ArgRef item : items) check_arg(item, node, path(".items", i++), depth + 1);
}

/// Range checks of the payloads that hold c10 enums or value ids.
void Validator::check_payload(const ArgRef& a, const FieldPath& path) {
  switch (a.kind()) {
    case Arg::Kind::kLayout:
      check_in_range(a.i(), static_cast<int64_t>(c10::Layout::NumOptions), path(".i"), "layout");
      break;
    case Arg::Kind::kScalarType:
      check_in_range(a.i(), static_cast<int64_t>(c10::ScalarType::Undefined), path(".i"),
                     "scalar type");
      break;
    case Arg::Kind::kMemoryFormat:
      check_in_range(a.i(), static_cast<int64_t>(c10::MemoryFormat::NumOptions), path(".i"),
                     "memory format");
      break;
    case Arg::Kind::kDevice:
      if (a.i() < 0 || a.i() > std::numeric_limits<int8_t>::max() ||
          !c10::isValidDeviceType(static_cast<c10::DeviceType>(a.i())) || a.device_index() < -1) {
        throw FormatError(path + ": device type " + std::to_string(a.i()) + " index " +
                          std::to_string(a.device_index()) + " is not a valid device");
      }
      break;
    case Arg::Kind::kSymInt:
      check_in_range(a.ref(), static_cast<int64_t>(g_.inputs.size()), path(".ref"),
                     "symint input id");
      if (g_.inputs[static_cast<size_t>(a.ref())].kind != GraphInput::Kind::kInt) {
        throw FormatError(path + ".ref: value id " + std::to_string(a.ref()) +
                          " is not an int graph input");
      }
      break;
    default:
      break;
  }
}

}  // namespace

void validate_graph(const Graph& graph) { Validator(graph).run(); }

}  // namespace ca
