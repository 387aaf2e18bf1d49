// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Hand-built graphs for the serializer and IR tests: a valid graph that uses every node kind
// and every arg kind, plus small builders.

#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "ca/graph.h"
#include "ca/version.h"

namespace ca::test {

inline ArgType leaf(ArgType::Kind kind) { return ArgType{kind, {}}; }

inline ArgType nested(ArgType::Kind kind, std::vector<ArgType> contained) {
  return ArgType{kind, std::move(contained)};
}

inline Arg with_kind(Arg::Kind kind, int64_t i = 0) { return Arg::integer(i, kind); }

inline Arg sym_int(ValueId id) {
  Arg a;
  a.kind = Arg::Kind::kSymInt;
  a.ref = id;
  return a;
}

inline Arg complex_arg(double re, double im) {
  Arg a;
  a.kind = Arg::Kind::kComplex;
  a.c = c10::complex<double>(re, im);
  return a;
}

inline Arg device_arg(c10::DeviceType type, int8_t index) {
  Arg a = with_kind(Arg::Kind::kDevice, static_cast<int64_t>(type));
  a.device_index = index;
  return a;
}

inline Arg dict_arg(ArgType key, ArgType value, std::vector<Arg> items) {
  Arg a;
  a.kind = Arg::Kind::kDict;
  a.type = std::move(key);
  a.value_type = std::move(value);
  a.items = std::move(items);
  return a;
}

inline Arg bools(const std::vector<bool>& v) {
  std::vector<Arg> items;
  items.reserve(v.size());
  for (bool b : v) items.push_back(Arg::boolean(b));
  return Arg::list(leaf(ArgType::Kind::kBool), std::move(items));
}

inline Arg ints(const std::vector<int64_t>& v) {
  std::vector<Arg> items;
  items.reserve(v.size());
  for (int64_t i : v) items.push_back(Arg::integer(i));
  return Arg::list(leaf(ArgType::Kind::kInt), std::move(items));
}

/// One arg of every Arg::Kind, with edge-case payloads; refs point into sample_graph()'s
/// values (%2 is a tensor input, %3 an int input).
inline std::vector<std::pair<std::string, Arg>> every_arg_kind() {
  using K = ArgType::Kind;
  const double nan_payload = std::nan("0x5a5a");
  return {
      {"none", Arg::none()},
      {"bool_true", Arg::boolean(true)},
      {"int_min", Arg::integer(std::numeric_limits<int64_t>::min())},
      {"int_max", Arg::integer(std::numeric_limits<int64_t>::max())},
      {"double_neg_zero", Arg::real(-0.0)},
      {"double_nan_payload", Arg::real(nan_payload)},
      {"double_inf", Arg::real(-std::numeric_limits<double>::infinity())},
      {"double_denormal", Arg::real(std::numeric_limits<double>::denorm_min())},
      {"complex", complex_arg(1.5, -2.25)},
      {"complex_neg_zero", complex_arg(-0.0, 0.0)},
      {"string", Arg::string("sum_to_size \xc3\xa9")},
      {"string_with_nul", Arg::string(std::string("a\0b", 3))},
      {"layout", with_kind(Arg::Kind::kLayout, static_cast<int64_t>(c10::kStrided))},
      {"scalar_type", with_kind(Arg::Kind::kScalarType, static_cast<int64_t>(c10::kFloat))},
      {"memory_format",
       with_kind(Arg::Kind::kMemoryFormat, static_cast<int64_t>(c10::MemoryFormat::ChannelsLast))},
      {"device_cpu", device_arg(c10::DeviceType::CPU, -1)},
      {"device_cuda1", device_arg(c10::DeviceType::CUDA, 1)},
      {"tensor", Arg::tensor(2)},
      {"tensor_undefined", Arg::tensor(kNoValue)},
      {"symint", sym_int(3)},
      {"list_bool", bools({true, false, true})},
      {"list_int_empty", Arg::list(leaf(K::kInt), {})},
      {"list_tensor", Arg::list(leaf(K::kTensor), {Arg::tensor(0), Arg::tensor(kNoValue)})},
      {"list_symint", Arg::list(leaf(K::kSymInt), {sym_int(3), Arg::integer(4)})},
      {"list_optional_tuple",
       Arg::list(
           nested(K::kOptional, {nested(K::kTuple, {leaf(K::kScalarType), leaf(K::kDevice)})}),
           {Arg::none(), Arg::tuple({with_kind(Arg::Kind::kScalarType, 7),
                                     device_arg(c10::DeviceType::CPU, -1)})})},
      {"tuple_empty", Arg::tuple({})},
      {"tuple", Arg::tuple({Arg::integer(1), Arg::real(2.5), Arg::string("x")})},
      {"dict", dict_arg(leaf(K::kString), leaf(K::kInt),
                        {Arg::string("a"), Arg::integer(1), Arg::string("b"), Arg::integer(2)})},
      {"dict_empty", dict_arg(leaf(K::kString), nested(K::kList, {leaf(K::kAny)}), {})},
  };
}

inline GraphInput tensor_input(std::string name, c10::ScalarType dtype, std::vector<int64_t> sizes,
                               c10::Device device = c10::Device(c10::kCPU),
                               bool requires_grad = false) {
  GraphInput in;
  in.name = std::move(name);
  in.meta.dtype = dtype;
  in.meta.sizes = std::move(sizes);
  in.meta.device = device;
  in.meta.requires_grad = requires_grad;
  return in;
}

/// A node on `g`'s tables (push it onto g.nodes, or place it there): Graph::make_node.
inline Node make_node(Graph& g, NodeKind kind, const std::string& op,
                      const std::vector<ValueId>& inputs, const std::vector<Arg>& args,
                      const std::vector<ValueId>& outputs) {
  return g.make_node(kind, op, inputs, args, outputs);
}

/// Node `i`'s inputs or outputs (`which`: &Node::inputs, &Node::outputs) as a vector, edited
/// and written back (as a fresh range of the graph's value_ids).
inline void edit_ids(Graph& g, size_t i, IdRange Node::*which,
                     const std::function<void(std::vector<ValueId>&)>& edit) {
  const c10::ArrayRef<ValueId> ids = g.ids(g.nodes.at(i).*which);
  std::vector<ValueId> v(ids.begin(), ids.end());
  edit(v);
  g.nodes[i].*which = g.add_ids(v);
}

/// Node `i`'s args as trees, edited in place; `commit()` writes them back (before each load).
class ArgEdit {
 public:
  ArgEdit(Graph& g, size_t i) : g_(g), i_(i), args_(g.args(i).trees()) {}
  Arg& operator[](size_t k) { return args_.at(k); }
  std::vector<Arg>& all() { return args_; }
  Graph& commit() {
    g_.set_args(i_, args_);
    return g_;
  }

 private:
  Graph& g_;
  size_t i_;
  std::vector<Arg> args_;
};

/// Edits node `i`'s args as trees: `edit(std::vector<Arg>& args)`.
template <class Edit>
void edit_args(Graph& g, size_t i, Edit&& edit) {
  std::vector<Arg> args = g.args(i).trees();
  edit(args);
  g.set_args(i, args);
}

/// A valid graph with every node kind (in this order: functional, validate_outputs,
/// accumulate, copy_slices_prologue, aten, copy_slices_epilogue, accumulate_grad) and, in
/// node 0's args, every arg kind. Values: %0..%4 inputs, %5..%14 node outputs.
inline Graph sample_graph() {
  Graph g;
  g.torch_version = runtime_torch_version();
  g.inputs.push_back(tensor_input("grad_output.0", c10::kFloat, {2, 3}));
  g.inputs.push_back(tensor_input("param.w", c10::kFloat, {2, 3}, c10::Device(c10::kCPU), true));
  g.inputs.push_back(tensor_input("saved.0", c10::kDouble, {3}, c10::Device(c10::kCUDA, 0)));
  GraphInput size;
  size.kind = GraphInput::Kind::kInt;
  size.name = "size.0";
  size.int_value = 7;
  g.inputs.push_back(size);
  GraphInput scale;
  scale.kind = GraphInput::Kind::kDouble;
  scale.name = "scale";
  scale.double_value = 0.5;
  g.inputs.push_back(scale);

  std::vector<Arg> all_args;
  for (auto& [name, arg] : every_arg_kind()) all_args.push_back(arg);
  using K = ArgType::Kind;
  const Arg geometry = Arg::tuple({ints({2, 3}), ints({3, 1}), Arg::integer(0)});
  Node aten = make_node(g, NodeKind::kAten, "aten::mul", {11, 12},
                        {Arg::tensor(11), Arg::tensor(12)}, {13});
  aten.overload = g.intern("Tensor");
  g.nodes = {
      make_node(g, NodeKind::kFunctional, "MulBackward0", {0}, all_args, {5, 6}),
      make_node(g, NodeKind::kValidateOutputs, "", {5, 6},
                {Arg::list(nested(K::kOptional, {leaf(K::kAny)}), {Arg::none(), Arg::none()})},
                {7, 8}),
      make_node(g, NodeKind::kAccumulate, "", {7, kNoValue}, {}, {9}),
      make_node(g, NodeKind::kCopySlicesPrologue, "", {9}, {geometry, geometry}, {10, 11, 12}),
      aten,
      make_node(g, NodeKind::kCopySlicesEpilogue, "", {10, 11, 13, kNoValue},
                {bools({true, false})}, {14, kNoValue}),
      make_node(g, NodeKind::kAccumulateGrad, "AccumulateGrad", {1, 14}, {Arg::boolean(false)}, {}),
  };
  g.num_values = 15;
  g.outputs = {8, 14, kNoValue};
  // MulBackward0's schema as torch 2.13 reports it (checked against the registry in
  // op_binding_test): needs_input_grad, other, other_scalar_type, self, self_scalar_type.
  g.op_schemas = {{"MulBackward0",
                   {nested(K::kList, {leaf(K::kBool)}), leaf(K::kTensor), leaf(K::kScalarType),
                    leaf(K::kTensor), leaf(K::kScalarType)},
                   2,
                   false}};
  return g;
}

/// The smallest valid graph: one tensor input returned as the output.
inline Graph tiny_graph() {
  Graph g;
  g.torch_version = runtime_torch_version();
  g.inputs.push_back(tensor_input("x", c10::kFloat, {4}));
  g.num_values = 1;
  g.outputs = {0};
  return g;
}

}  // namespace ca::test
