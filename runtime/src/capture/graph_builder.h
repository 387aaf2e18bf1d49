// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Builds a ca::Graph while capture runs: hands out meta-device proxies for values and maps
// proxies met in node calls back to value ids.

#include <ATen/core/Tensor.h>
#include <c10/core/TensorImpl.h>

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "ca/graph.h"

namespace ca::detail {

class GraphBuilder {
 public:
  /// Adds a tensor graph input backed by `real`; returns its proxy.
  at::Tensor add_input(const at::Tensor& real, std::string name);
  /// A new value (a node output) with a proxy of the given sizes/strides and dtype.
  ValueId define(c10::IntArrayRef sizes, c10::IntArrayRef strides, c10::ScalarType dtype,
                 at::Tensor* proxy);
  /// A new value with a contiguous proxy of the given sizes and dtype.
  ValueId define(c10::IntArrayRef sizes, c10::ScalarType dtype, at::Tensor* proxy);
  /// A new value shaped like `like` (contiguous); kNoValue and an undefined proxy if undefined.
  ValueId define_like(const at::Tensor& like, at::Tensor* proxy);
  /// Value id of a proxy; kNoValue for an undefined tensor. Throws CaptureError naming `where`
  /// for a tensor that is no proxy.
  ValueId id_of(const at::Tensor& t, const std::string& where);
  /// The proxy standing for a value.
  const at::Tensor& proxy(ValueId id) const { return proxies_.at(static_cast<size_t>(id)); }

  /// Appends a node with its packed `args`.
  void add_node(NodeKind kind, std::string_view op, const std::vector<ValueId>& inputs,
                const std::vector<Arg>& args, const std::vector<ValueId>& outputs) {
    graph_.nodes.push_back(graph_.make_node(kind, op, inputs, args, outputs));
  }
  /// Records the packed-args schema of a functional op the graph uses (first one per name wins).
  void note_op_schema(OpSchema schema);
  /// The graph, with its op schemas in name order.
  Graph& finish();
  Graph& graph() { return graph_; }
  std::vector<at::Tensor>& real_inputs() { return real_inputs_; }

 private:
  ValueId bind(at::Tensor proxy);

  Graph graph_;
  std::vector<at::Tensor> real_inputs_;
  std::vector<at::Tensor> proxies_;  // by value id; keeps proxy impls alive and unique
  std::unordered_map<const c10::TensorImpl*, ValueId> ids_;
  std::map<std::string, OpSchema> op_schemas_;
};

}  // namespace ca::detail
