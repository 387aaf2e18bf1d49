// SPDX-License-Identifier: BSD-3-Clause
// ca::Graph -> FlatBuffers bytes (schema/ca_graph.fbs), sealed with the checksum trailer.
#include <cmath>
#include <string>
#include <vector>

#include "ca/error.h"
#include "ca/graph_io.h"
#include "ca/version.h"
#include "ca_graph_generated.h"
#include "fb_enums.h"
#include "graph_checksum.h"

namespace ca {
namespace {

using flatbuffers::Offset;
using flatbuffers::Vector;

bool is_positive_zero(double v) { return v == 0.0 && !std::signbit(v); }

bool is_default(const ArgType& t) { return t.kind == ArgType::Kind::kAny && t.contained.empty(); }

/// Builds the FlatBuffers form of one graph; children are written before their parents.
class Writer {
 public:
  std::vector<uint8_t> write(const Graph& graph);

 private:
  /// FlatBuffers leaves out a field equal to its default, and -0.0 == 0.0: force it then.
  template <typename Add>
  void add_exact(double v, Add add) {
    const bool force = v == 0.0 && std::signbit(v);
    if (force) fbb_.ForceDefaults(true);
    add(v);
    if (force) fbb_.ForceDefaults(false);
  }
  Offset<flatbuffers::String> string(std::string_view s) {
    return s.empty() ? 0 : fbb_.CreateString(s.data(), s.size());
  }
  Offset<Vector<int32_t>> ids(c10::ArrayRef<ValueId> v) {
    return v.empty() ? 0 : fbb_.CreateVector(v.data(), v.size());
  }
  Offset<fb::ArgType> type(const ArgType& t);
  Offset<fb::Arg> arg(const ArgRef& a);
  Offset<fb::GraphInput> input(const GraphInput& in);
  Offset<fb::Node> node(const Graph& g, size_t i);
  Offset<fb::OpSchema> op_schema(const OpSchema& o);

  flatbuffers::FlatBufferBuilder fbb_{4096};
};

Offset<fb::ArgType> Writer::type(const ArgType& t) {
  if (is_default(t)) return 0;
  Offset<Vector<Offset<fb::ArgType>>> contained = 0;
  if (!t.contained.empty()) {
    std::vector<Offset<fb::ArgType>> v;
    v.reserve(t.contained.size());
    for (const ArgType& c : t.contained) {
      // A default child must still be present: vector elements cannot be null.
      v.push_back(is_default(c) ? fb::CreateArgType(fbb_) : type(c));
    }
    contained = fbb_.CreateVector(v);
  }
  return fb::CreateArgType(fbb_, static_cast<fb::ArgTypeKind>(t.kind), contained);
}

Offset<fb::Arg> Writer::arg(const ArgRef& a) {
  const auto s = string(a.s());
  const auto elem_type = type(a.type());
  const auto value_type = type(a.value_type());
  Offset<Vector<Offset<fb::Arg>>> items = 0;
  if (const ArgRefs children = a.items(); !children.empty()) {
    std::vector<Offset<fb::Arg>> v;
    v.reserve(children.size());
    for (ArgRef item : children) v.push_back(arg(item));
    items = fbb_.CreateVector(v);
  }
  fb::ArgBuilder b(fbb_);
  b.add_kind(static_cast<fb::ArgKind>(a.kind()));
  b.add_b(a.b());
  b.add_i(a.i());
  add_exact(a.d(), [&](double v) { b.add_d(v); });
  const c10::complex<double> value = a.c();
  const fb::Complex c(value.real(), value.imag());
  if (!is_positive_zero(value.real()) || !is_positive_zero(value.imag())) b.add_c(&c);
  b.add_s(s);
  b.add_device_index(a.device_index());
  b.add_ref(a.ref());
  b.add_type(elem_type);
  b.add_value_type(value_type);
  b.add_items(items);
  return b.Finish();
}

Offset<fb::GraphInput> Writer::input(const GraphInput& in) {
  const auto name = string(in.name);
  Offset<fb::TensorMeta> meta = 0;
  if (!(in.meta == TensorMeta{})) {
    const auto sizes = in.meta.sizes.empty() ? 0 : fbb_.CreateVector(in.meta.sizes);
    meta = fb::CreateTensorMeta(fbb_, static_cast<int8_t>(in.meta.dtype), sizes,
                                static_cast<int8_t>(in.meta.device.type()), in.meta.device.index(),
                                in.meta.requires_grad);
  }
  fb::GraphInputBuilder b(fbb_);
  b.add_kind(static_cast<fb::InputKind>(in.kind));
  b.add_name(name);
  b.add_meta(meta);
  b.add_int_value(in.int_value);
  add_exact(in.double_value, [&](double v) { b.add_double_value(v); });
  return b.Finish();
}

Offset<fb::Node> Writer::node(const Graph& g, size_t i) {
  const Node& n = g.nodes[i];
  if (n.kind == NodeKind::kOpaque) {
    throw Error(node_path(g, i) +
                ": calls a live autograd node of this process, which a file cannot hold; a graph "
                "with opaque nodes replays only in process (ca::CompiledBackward, ca::enable())");
  }
  if (!g.has_name(n.op) || !g.has_name(n.overload)) {
    throw Error("nodes[" + std::to_string(i) + "]: a name id not in the graph's name table");
  }
  const auto op = string(g.op(n));
  const auto overload = string(g.overload(n));
  if (!g.arg_pool.holds(n.args)) {
    throw Error("nodes[" + std::to_string(i) + "].args: not a range of the graph's arg pool");
  }
  for (const IdRange r : {n.inputs, n.outputs}) {
    if (!g.holds(r)) {
      throw Error("nodes[" + std::to_string(i) + "]: ids not a range of the graph's value ids");
    }
  }
  const auto inputs = ids(g.ids(n.inputs));
  Offset<Vector<Offset<fb::Arg>>> args = 0;
  if (const ArgRefs node_args = g.args(n); !node_args.empty()) {
    std::vector<Offset<fb::Arg>> v;
    v.reserve(node_args.size());
    for (ArgRef a : node_args) v.push_back(arg(a));
    args = fbb_.CreateVector(v);
  }
  const auto outputs = ids(g.ids(n.outputs));
  return fb::CreateNode(fbb_, static_cast<fb::NodeKind>(n.kind), op, overload, inputs, args,
                        outputs);
}

Offset<fb::OpSchema> Writer::op_schema(const OpSchema& o) {
  const auto op = string(o.op);
  std::vector<Offset<fb::ArgType>> args;
  args.reserve(o.args.size());
  for (const ArgType& t : o.args) args.push_back(is_default(t) ? fb::CreateArgType(fbb_) : type(t));
  return fb::CreateOpSchema(fbb_, op, fbb_.CreateVector(args), o.needs_input_grad_count,
                            o.is_custom_function);
}

std::vector<uint8_t> Writer::write(const Graph& graph) {
  const auto torch_version = string(graph.torch_version);
  std::vector<Offset<fb::GraphInput>> inputs;
  inputs.reserve(graph.inputs.size());
  for (const GraphInput& in : graph.inputs) inputs.push_back(input(in));
  std::vector<Offset<fb::Node>> nodes;
  nodes.reserve(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) nodes.push_back(node(graph, i));
  const auto inputs_vec = inputs.empty() ? 0 : fbb_.CreateVector(inputs);
  const auto nodes_vec = nodes.empty() ? 0 : fbb_.CreateVector(nodes);
  const auto outputs = ids(graph.outputs);
  std::vector<Offset<fb::OpSchema>> schemas;
  schemas.reserve(graph.op_schemas.size());
  for (const OpSchema& o : graph.op_schemas) schemas.push_back(op_schema(o));
  const auto schemas_vec = schemas.empty() ? 0 : fbb_.CreateVector(schemas);
  const auto writer_version = fbb_.CreateString(kVersion);
  const auto root = fb::CreateGraph(fbb_, graph.format_version, torch_version, graph.num_values,
                                    inputs_vec, nodes_vec, outputs, schemas_vec, writer_version);
  fb::FinishGraphBuffer(fbb_, root);
  const uint8_t* data = fbb_.GetBufferPointer();
  return std::vector<uint8_t>(data, data + fbb_.GetSize());
}

}  // namespace

std::vector<uint8_t> graph_to_bytes(const Graph& graph) {
  std::vector<uint8_t> bytes = Writer().write(graph);
  detail::append_checksum(bytes);
  return bytes;
}

}  // namespace ca
