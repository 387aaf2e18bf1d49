// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file
/// The ca-replay IR: a captured backward graph as plain C++ data. Knows nothing of FlatBuffers;
/// the serializer maps it to and from bytes, the executor runs it.

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <c10/util/complex.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ca/compact_string.h"
#include "ca/compact_vector.h"

namespace ca {

/// Index of an SSA value: graph inputs come first, then node outputs in definition order.
using ValueId = int32_t;
/// Stands for an undefined tensor (an absent gradient, an unset saved variable).
inline constexpr ValueId kNoValue = -1;
/// Version of the on-disk format this build reads and writes.
/// Format 2 records each functional op's packed-args schema (Graph::op_schemas).
inline constexpr uint32_t kFormatVersion = 2;
/// A node's input or output value ids: up to two inline, no heap block for most nodes.
using IdList = CompactVector<ValueId, 2>;

/// A c10 type, as much as packed args need to rebuild typed containers exactly (a `List[bool]`
/// stays a `List[bool]`, an empty `List[int]` keeps its element type).
struct ArgType {
  enum class Kind : uint8_t {
    kAny,
    kNone,
    kBool,
    kInt,
    kFloat,
    kComplex,
    kString,
    kTensor,
    kSymInt,
    kSymFloat,
    kNumber,
    kLayout,
    kDevice,
    kScalarType,
    kMemoryFormat,
    kOptional,  ///< contained = {T}
    kList,      ///< contained = {T}
    kTuple,     ///< contained = element types
    kDict,      ///< contained = {K, V}
  };
  Kind kind = Kind::kAny;
  CompactVector<ArgType> contained;

  bool operator==(const ArgType& o) const { return kind == o.kind && contained == o.contained; }
  bool operator!=(const ArgType& o) const { return !(*this == o); }
};

/// One packed argument: an IValue tree in which tensors and symbolic sizes are references to
/// values. Layout, ScalarType and MemoryFormat are ints inside an IValue; they keep their own
/// kinds here so that dumps and other front ends can read them.
struct Arg {
  enum class Kind : uint8_t {
    kNone,
    kBool,
    kInt,
    kDouble,
    kComplex,
    kString,
    kLayout,
    kScalarType,
    kMemoryFormat,  ///< payload in `i`
    kDevice,        ///< payload in `i` (DeviceType) and `device_index`
    kTensor,        ///< `ref` names a tensor value; kNoValue is an undefined tensor
    kSymInt,        ///< `ref` names an int graph input (a symbolic size)
    kList,          ///< typed list: `type` is the element type, `items` the elements
    kTuple,         ///< `items` are the elements
    kDict,          ///< `type` = key type, `value_type` = value type, `items` = k0, v0, k1, v1, ...
  };
  // Fields ordered so that the small ones share one word: an Arg is 104 bytes, and a graph
  // holds millions of them.
  Kind kind = Kind::kNone;
  bool b = false;
  int8_t device_index = -1;
  ValueId ref = kNoValue;
  int64_t i = 0;
  double d = 0.0;
  c10::complex<double> c{0.0, 0.0};
  CompactString s;
  ArgType type;
  ArgType value_type;
  CompactVector<Arg> items;

  bool operator==(const Arg& o) const;
  bool operator!=(const Arg& o) const { return !(*this == o); }

  static Arg none() { return Arg{}; }
  static Arg boolean(bool v);
  static Arg integer(int64_t v, Kind kind = Kind::kInt);
  static Arg real(double v);
  static Arg string(const std::string& v);
  static Arg tensor(ValueId id);
  static Arg list(ArgType elem, std::vector<Arg> items);
  static Arg tuple(std::vector<Arg> items);
};

/// A TensorMeta size that any size matches: a dimension of a graph exported with dynamic shapes.
inline constexpr int64_t kDynamicSize = -1;

/// Static metadata of a tensor graph input, checked when inputs are bound.
struct TensorMeta {
  c10::ScalarType dtype = c10::ScalarType::Float;
  std::vector<int64_t> sizes;  ///< kDynamicSize where any size is accepted
  c10::Device device{c10::kCPU};
  bool requires_grad = false;

  bool operator==(const TensorMeta& o) const {
    return dtype == o.dtype && sizes == o.sizes && device == o.device &&
           requires_grad == o.requires_grad;
  }
};

/// A graph input. Tensors are grad outputs, saved tensors and parameters; ints and doubles
/// are symbolic sizes and lifted scalars.
struct GraphInput {
  enum class Kind : uint8_t { kTensor, kInt, kDouble };
  Kind kind = Kind::kTensor;
  std::string name;           ///< for humans and error messages, e.g. "grad_output.0", "saved.3"
  TensorMeta meta;            ///< kTensor only
  int64_t int_value = 0;      ///< kInt: value seen at capture
  double double_value = 0.0;  ///< kDouble: value seen at capture

  bool operator==(const GraphInput& o) const {
    return kind == o.kind && name == o.name && meta == o.meta && int_value == o.int_value &&
           double_value == o.double_value;
  }
};

/// Kinds of node; the comment gives each kind's inputs, args and outputs.
enum class NodeKind : uint8_t {
  kFunctional,          ///< op(grads=inputs, packed args) -> outputs
  kValidateOutputs,     ///< inputs -> outputs, args = {packed vector<optional<InputMetadata>>}
  kAccumulate,          ///< {a, b} -> {a + b}; an undefined side passes the other through
  kAccumulateGrad,      ///< {variable, grad} -> {}, args = {has_post_hooks}; writes .grad
  kCopySlicesPrologue,  ///< {grad} -> {result, grad_slice, grad_slice_clone}, args = {base, view}
  kCopySlicesEpilogue,  ///< {result, grad_slice, res...} -> outputs, args = {needs_input_grad}
  kAten,                ///< dispatcher op `op`.`overload`, args = full boxed stack
};

/// Printable name of a node kind ("functional", "validate_outputs", ...).
const char* node_kind_name(NodeKind kind);

/// One step of the graph.
struct Node {
  NodeKind kind = NodeKind::kFunctional;
  CompactString op;        ///< kFunctional: op name; kAten: qualified name ("aten::mul")
  CompactString overload;  ///< kAten: overload name ("Tensor"), may be empty
  IdList inputs;
  std::vector<Arg> args;
  IdList outputs;  ///< values defined here; kNoValue where a result is unused

  bool operator==(const Node& o) const {
    return kind == o.kind && op == o.op && overload == o.overload && inputs == o.inputs &&
           args == o.args && outputs == o.outputs;
  }
};

/// The packed-args schema of one functional op as the capturing torch reported it to upstream's
/// `bind_function`, plus the probed `needs_input_grad` count: what lets a graph replay on
/// another torch version whose op has the same schema.
struct OpSchema {
  std::string op;                       ///< functional op name, as in Node::op
  std::vector<ArgType> args;            ///< type of each packed arg, in order
  int64_t needs_input_grad_count = -1;  ///< length of the flags the op unpacks first; -1 unknown
  bool is_custom_function = false;      ///< custom C++ function: its schema comes per call

  bool operator==(const OpSchema& o) const {
    return op == o.op && args == o.args && needs_input_grad_count == o.needs_input_grad_count &&
           is_custom_function == o.is_custom_function;
  }
};

/// A whole captured backward graph.
struct Graph {
  uint32_t format_version = kFormatVersion;
  std::string torch_version;       ///< "2.13.0" style, of the torch that captured it
  int32_t num_values = 0;          ///< inputs.size() + all defined node outputs
  std::vector<GraphInput> inputs;  ///< value ids [0, inputs.size())
  std::vector<Node> nodes;         ///< in execution order
  std::vector<ValueId> outputs;    ///< values returned by a replay
  /// One per functional op name the nodes use, sorted by name (capture fills it).
  std::vector<OpSchema> op_schemas;
  /// The ca-replay version that wrote the file this graph was read from (empty: a file from
  /// before versions were recorded). Provenance, not content: writers record their own version,
  /// never this field, and two graphs that differ only here are equal.
  std::string writer_version;

  bool operator==(const Graph& o) const {
    return format_version == o.format_version && torch_version == o.torch_version &&
           num_values == o.num_values && inputs == o.inputs && nodes == o.nodes &&
           outputs == o.outputs && op_schemas == o.op_schemas;
  }
};

/// How every message names node `i` of `graph`: "nodes[17] (functional MulBackward0)"; a
/// validate_outputs is named by the op it follows ("nodes[18] (validate_outputs of
/// MulBackward0)"). `i` must be an index of `graph.nodes`.
std::string node_path(const Graph& graph, size_t i);

/// Calls `visit(ref)` for each reference in `arg`'s tree, in pre-order: every kTensor and
/// kSymInt whose `ref` names a value (an undefined tensor, kNoValue, refers to nothing).
/// `visit` returns true to go on and false to stop; for_each_ref returns false when a visit
/// stopped it. `Arg` may be const (to read references) or not (to rewrite them in place).
template <class A, class Visit>
bool for_each_ref(A& arg, Visit&& visit) {
  if ((arg.kind == Arg::Kind::kTensor || arg.kind == Arg::Kind::kSymInt) && arg.ref != kNoValue &&
      !visit(arg)) {
    return false;
  }
  for (A& item : arg.items) {
    if (!for_each_ref(item, visit)) return false;
  }
  return true;
}

/// True when `arg`'s tree holds a reference of kind `kind` (kTensor or kSymInt), or of either
/// when `kind` is kNone.
inline bool has_refs(const Arg& arg, Arg::Kind kind = Arg::Kind::kNone) {
  return !for_each_ref(
      arg, [kind](const Arg& ref) { return kind != Arg::Kind::kNone && ref.kind != kind; });
}

/// Graph-input indices that accumulate_grad nodes write, unique, in order of first write: the
/// parameters whose gradients a replay produces.
std::vector<size_t> grad_targets(const Graph& graph);

}  // namespace ca
