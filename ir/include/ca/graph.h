// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file
/// The ca-replay IR: a captured backward graph as plain C++ data. Knows nothing of FlatBuffers;
/// the serializer maps it to and from bytes, the executor runs it.

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <c10/util/ArrayRef.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ca/arg.h"

namespace ca {

/// Version of the on-disk format this build reads and writes.
/// Format 2 records each functional op's packed-args schema (Graph::op_schemas).
inline constexpr uint32_t kFormatVersion = 2;
/// A name in a graph's name table (Graph::name): a node's op or overload. 0 is the empty name.
using NameId = uint32_t;

/// A node's input or output value ids: a run of Graph::value_ids, read through Graph::ids.
struct IdRange {
  uint32_t first = 0;
  uint32_t size = 0;
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
  /// A live autograd node called in process (op = its name, no args): grads -> one output per
  /// next edge. Made only by the trainer API's capture, loaded with ExecutorOptions::opaque_nodes
  /// and run through the caller's OpaqueCalls; a file cannot hold one (the format ends at kAten).
  kOpaque,
};

/// Printable name of a node kind ("functional", "validate_outputs", ...).
const char* node_kind_name(NodeKind kind);

/// One step of the graph. Its names, ids and args live in the graph's tables (a million-node
/// graph holds 40 bytes a node plus what it refers to); read them through the Graph.
struct Node {
  NodeKind kind = NodeKind::kFunctional;
  ArgRange args;        ///< in Graph::arg_pool, read through Graph::args
  NameId op = 0;        ///< kFunctional: op name; kAten: qualified name ("aten::mul")
  NameId overload = 0;  ///< kAten: overload name ("Tensor"), may be empty
  IdRange inputs;       ///< in Graph::value_ids, read through Graph::ids
  IdRange outputs;      ///< values defined here; kNoValue where a result is unused
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
  ArgPool arg_pool;                ///< every node's packed args
  std::vector<ValueId> value_ids;  ///< every node's input and output ids, in IdRanges
  std::vector<ValueId> outputs;    ///< values returned by a replay
  /// One per functional op name the nodes use, sorted by name (capture fills it).
  std::vector<OpSchema> op_schemas;
  /// The ca-replay version that wrote the file this graph was read from (empty: a file from
  /// before versions were recorded). Provenance, not content: writers record their own version,
  /// never this field, and two graphs that differ only here are equal.
  std::string writer_version;

  /// Node `n`'s args (`n` one of `nodes`).
  ArgRefs args(const Node& n) const { return arg_pool.refs(n.args); }
  ArgRefs args(size_t i) const { return arg_pool.refs(nodes.at(i).args); }
  /// A node on this graph's tables: `op` interned, `inputs`, `args` and `outputs` appended to the
  /// pools (they may view this graph's own tables). Push it onto `nodes` (or place it there): how
  /// builders make nodes.
  Node make_node(NodeKind kind, std::string_view op, c10::ArrayRef<ValueId> inputs,
                 const std::vector<Arg>& args, c10::ArrayRef<ValueId> outputs);
  /// Replaces node `i`'s args, for tools and tests that edit a graph (the records of later
  /// nodes move; their ranges follow). Builders append: `n.args = g.arg_pool.append(args)`.
  void set_args(size_t i, const std::vector<Arg>& args);

  /// Whether `r` lies within value_ids.
  bool holds(IdRange r) const {
    return r.first <= value_ids.size() && r.size <= value_ids.size() - r.first;
  }
  /// The ids of range `r` (a node's inputs or outputs). Throws std::out_of_range for a range
  /// outside value_ids (graph validation reports such a node first).
  c10::ArrayRef<ValueId> ids(IdRange r) const;
  /// Id `k` of range `r`, to rewire a node in place (tools, tests). Throws std::out_of_range.
  ValueId& id(IdRange r, size_t k);
  /// Appends `ids` to value_ids and returns their range: how builders set a node's inputs and
  /// outputs (`n.inputs = g.add_ids({a, b})`). A replaced range stays in the pool, unread.
  IdRange add_ids(c10::ArrayRef<ValueId> ids);

  /// The id of `name` in this graph's name table, added if new.
  NameId intern(std::string_view name);
  /// Name `id` of the table ("" for an id the table does not hold: validation reports it).
  std::string_view name(NameId id) const {
    return id < names_.size() ? std::string_view(names_[id]) : std::string_view();
  }
  /// Whether the name table holds `id`.
  bool has_name(NameId id) const { return id == 0 || id < names_.size(); }
  std::string_view op(const Node& n) const { return name(n.op); }
  std::string_view overload(const Node& n) const { return name(n.overload); }

  /// Node `i` of this graph and node `j` of `o` hold the same kind, op, values and args.
  bool node_equal(size_t i, const Graph& o, size_t j) const;
  /// Equal content (arg records may lie elsewhere in the pools).
  bool operator==(const Graph& o) const;

 private:
  std::vector<std::string> names_{""};                            // by NameId; 0 is ""
  std::map<std::string, NameId, std::less<>> name_ids_{{"", 0}};  // interning index
};

/// How every message names node `i` of `graph`: "nodes[17] (functional MulBackward0)"; a
/// validate_outputs is named by the op it follows ("nodes[18] (validate_outputs of
/// MulBackward0)"). `i` must be an index of `graph.nodes`.
std::string node_path(const Graph& graph, size_t i);

/// Graph-input indices that accumulate_grad nodes write, unique, in order of first write: the
/// parameters whose gradients a replay produces.
std::vector<size_t> grad_targets(const Graph& graph);

}  // namespace ca
