// SPDX-License-Identifier: BSD-3-Clause
#include "capture/graph_builder.h"

#include <ATen/ATen.h>

#include "ca/error.h"
#include "check.h"

namespace ca::detail {
namespace {

TensorMeta meta_of(const at::Tensor& t) {
  TensorMeta m;
  m.dtype = t.scalar_type();
  m.sizes = t.sizes().vec();
  m.device = t.device();
  m.requires_grad = t.requires_grad();
  return m;
}

}  // namespace

ValueId GraphBuilder::bind(at::Tensor proxy) {
  const auto id = static_cast<ValueId>(proxies_.size());
  ids_.emplace(proxy.unsafeGetTensorImpl(), id);
  proxies_.push_back(std::move(proxy));
  graph_.num_values = static_cast<int32_t>(proxies_.size());
  return id;
}

at::Tensor GraphBuilder::add_input(const at::Tensor& real, std::string name) {
  CA_CHECK(proxies_.size() == graph_.inputs.size(), "graph inputs must come before node values");
  GraphInput in;
  in.kind = GraphInput::Kind::kTensor;
  in.name = std::move(name);
  in.meta = meta_of(real);
  graph_.inputs.push_back(std::move(in));
  real_inputs_.push_back(real);
  at::Tensor proxy = at::empty_strided(real.sizes(), real.strides(),
                                       real.options().device(at::kMeta).requires_grad(false));
  bind(proxy);
  return proxy;
}

ValueId GraphBuilder::define(c10::IntArrayRef sizes, c10::IntArrayRef strides,
                             c10::ScalarType dtype, at::Tensor* proxy) {
  *proxy = at::empty_strided(sizes, strides, at::TensorOptions().dtype(dtype).device(at::kMeta));
  return bind(*proxy);
}

ValueId GraphBuilder::define(c10::IntArrayRef sizes, c10::ScalarType dtype, at::Tensor* proxy) {
  *proxy = at::empty(sizes, at::TensorOptions().dtype(dtype).device(at::kMeta));
  return bind(*proxy);
}

ValueId GraphBuilder::define_like(const at::Tensor& like, at::Tensor* proxy) {
  if (!like.defined()) {
    *proxy = at::Tensor();
    return kNoValue;
  }
  return define(like.sizes(), like.scalar_type(), proxy);
}

ValueId GraphBuilder::id_of(const at::Tensor& t, const std::string& where) {
  if (!t.defined()) return kNoValue;
  if (auto it = ids_.find(t.unsafeGetTensorImpl()); it != ids_.end()) return it->second;
  // Every tensor a node may pack was collected by compiled_args and given a proxy; anything
  // else would be a constant invisible to the cache key, which upstream does not produce.
  throw CaptureError(where + ": a tensor that is not a graph value reached a node call (" +
                     std::string(t.is_meta() ? "a foreign proxy" : "a real tensor") + ")");
}

void GraphBuilder::note_op_schema(OpSchema schema) {
  const std::string op = schema.op;
  op_schemas_.emplace(op, std::move(schema));
}

Graph& GraphBuilder::finish() {
  graph_.op_schemas.clear();
  for (auto& [op, schema] : op_schemas_) graph_.op_schemas.push_back(std::move(schema));
  op_schemas_.clear();
  return graph_;
}

}  // namespace ca::detail
