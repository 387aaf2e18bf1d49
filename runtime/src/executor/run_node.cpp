// What each node kind does at replay. Semantics follow upstream: validate_outputs is
// torch::autograd::validate_outputs, accumulate_grad is AccumulateGrad::accumulateGrad, the
// copy_slices pair is CopySlices::apply split around the inner node.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/functions/accumulate_grad.h>

#include "arg_convert.h"
#include "ca/error.h"
#include "executor/prepared.h"

namespace ca::detail {
namespace {

using torch::autograd::variable_list;
using Values = std::vector<at::Tensor>;

const at::Tensor& get(const Values& values, ValueId v) {
  static const at::Tensor kUndefined;
  return v == kNoValue ? kUndefined : values[static_cast<size_t>(v)];
}

variable_list gather(const PreparedNode& p, const Values& values) {
  variable_list out;
  out.reserve(p.inputs.size());
  for (ValueId v : p.inputs) out.push_back(get(values, v));
  return out;
}

void scatter(const PreparedNode& p, variable_list&& results, Values& values) {
  if (results.size() != p.outputs.size()) {
    throw ExecutionError("produced " + std::to_string(results.size()) + " outputs, graph expects " +
                         std::to_string(p.outputs.size()));
  }
  for (size_t k = 0; k < results.size(); ++k) {
    if (p.outputs[k] != kNoValue) values[static_cast<size_t>(p.outputs[k])] = std::move(results[k]);
  }
}

void set_slot(c10::IValue& arg, int32_t item, at::Tensor t) {
  if (item < 0) {
    arg = std::move(t);
  } else {
    arg.toList().set(static_cast<size_t>(item), std::move(t));
  }
}

// Fills tensor slots (and rebuilds nested args) from the current values.
void fill_args(PreparedNode& p, const Node& node, const Values& values) {
  for (const TensorSlot& s : p.slots) set_slot(p.args[s.arg], s.item, get(values, s.value));
  if (p.rebuilt_args.empty()) return;
  auto tensor_of = [&](ValueId v) { return get(values, v); };
  auto int_of = [&](ValueId v) { return get(values, v).item<int64_t>(); };
  for (uint32_t j : p.rebuilt_args) {
    p.args[j] = ivalue_from_arg(node.args[j], tensor_of, int_of);
  }
}

// Drops the references the prepared args hold once a node ran (or threw), so that dead
// tensors are freed at their last use.
struct ArgsRelease {
  PreparedNode& p;
  ~ArgsRelease() {
    for (const TensorSlot& s : p.slots) set_slot(p.args[s.arg], s.item, at::Tensor());
    for (uint32_t j : p.rebuilt_args) p.args[j] = c10::IValue();
  }
};

void run_validate(const PreparedNode& p, Values& values) {
  variable_list grads = gather(p, values);
  torch::autograd::validate_outputs(p.metadata, grads, [](const std::string& msg) { return msg; });
  scatter(p, std::move(grads), values);
}

void run_accumulate(const PreparedNode& p, Values& values) {
  const at::Tensor& a = get(values, p.inputs[0]);
  const at::Tensor& b = get(values, p.inputs[1]);
  at::Tensor sum = a.defined() && b.defined() ? a + b : (a.defined() ? a : b);
  scatter(p, {std::move(sum)}, values);
}

void run_accumulate_grad(const PreparedNode& p, Values& values) {
  const at::Tensor& variable = get(values, p.inputs[0]);
  // Take the grad out of its slot so that AccumulateGrad may steal it, as eager does.
  at::Tensor grad =
      p.inputs[1] == kNoValue ? at::Tensor() : std::move(values[static_cast<size_t>(p.inputs[1])]);
  if (!grad.defined()) return;
  at::Tensor& variable_grad = variable.mutable_grad();
  torch::autograd::AccumulateGrad::accumulateGrad(
      variable, variable_grad, grad, 1 + static_cast<size_t>(p.has_post_hooks),
      [&variable_grad](at::Tensor&& update) { variable_grad = std::move(update); });
}

void run_copy_slices_prologue(const PreparedNode& p, Values& values) {
  const at::Tensor& grad = get(values, p.inputs[0]);
  if (!grad.defined()) return scatter(p, variable_list(3), values);
  at::Tensor result = grad.new_empty_strided_symint(p.base.sym_sizes(), p.base.sym_strides());
  result.copy_(grad);
  const auto offset = p.view.sym_storage_offset() - p.base.sym_storage_offset();
  at::Tensor slice = result.as_strided_symint(p.view.sym_sizes(), p.view.sym_strides(), offset);
  at::Tensor clone = slice.clone(at::MemoryFormat::Contiguous);
  scatter(p, {std::move(result), std::move(slice), std::move(clone)}, values);
}

void run_copy_slices_epilogue(const PreparedNode& p, Values& values) {
  const at::Tensor& result = get(values, p.inputs[0]);
  const at::Tensor& grad_slice = get(values, p.inputs[1]);
  variable_list out(p.needs_input_grad.size());
  const size_t num_res = p.inputs.size() - 2;
  for (size_t i = 0; i < num_res && i < out.size(); ++i) {
    const at::Tensor& r = get(values, p.inputs[i + 2]);
    if (!p.needs_input_grad[i] || !r.defined() || !result.defined()) continue;
    if (i == 0) {
      at::Tensor slice = grad_slice;
      slice.copy_(r);
      out[0] = result;
    } else {
      out[i] = r;
    }
  }
  scatter(p, std::move(out), values);
}

void run_aten(PreparedNode& p, Values& values) {
  torch::jit::Stack stack(p.args.begin(), p.args.end());
  p.aten->callBoxed(stack);
  variable_list out;
  for (c10::IValue& v : stack) out.push_back(v.isTensor() ? v.toTensor() : at::Tensor());
  scatter(p, std::move(out), values);
}

}  // namespace

void run_node(PreparedNode& p, const Node& node, Values& values) {
  switch (p.kind) {
    case NodeKind::kFunctional: {
      ArgsRelease release{p};
      fill_args(p, node, values);
      return scatter(p, p.op->fn(gather(p, values), p.args), values);
    }
    case NodeKind::kValidateOutputs:
      return run_validate(p, values);
    case NodeKind::kAccumulate:
      return run_accumulate(p, values);
    case NodeKind::kAccumulateGrad:
      return run_accumulate_grad(p, values);
    case NodeKind::kCopySlicesPrologue:
      return run_copy_slices_prologue(p, values);
    case NodeKind::kCopySlicesEpilogue:
      return run_copy_slices_epilogue(p, values);
    case NodeKind::kAten: {
      ArgsRelease release{p};
      fill_args(p, node, values);
      return run_aten(p, values);
    }
  }
}

}  // namespace ca::detail
