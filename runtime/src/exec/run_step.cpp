// SPDX-License-Identifier: BSD-3-Clause
// What each step does at replay, on a frame's buffers. Semantics follow upstream:
// validate_outputs is torch::autograd::validate_outputs (skipped when the grads already
// conform, see validate_check.h), accumulate_grad is AccumulateGrad::accumulateGrad, the
// copy_slices pair is CopySlices::apply split around the inner node.
#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/functions/accumulate_grad.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <string_view>

#include "arg_convert.h"
#include "ca/error.h"
#include "exec/frame.h"
#include "guards/aten_check.h"
#include "guards/storage_bounds.h"
#include "guards/validate_check.h"
#include "leaf_lock.h"

namespace ca::detail {
namespace {

using torch::autograd::variable_list;
using Values = std::vector<at::Tensor>;

const at::Tensor& get(const Values& values, ValueId v) {
  static const at::Tensor kUndefined;
  return v == kNoValue ? kUndefined : values[static_cast<size_t>(v)];
}

void gather(const Step& s, Frame::State& f) {
  f.grads.clear();
  for (ValueId v : s.inputs) f.grads.push_back(get(f.values, v));
}

// As gather, but each grad the replay reads no more is moved out of its slot, so that the live
// node holds it alone, as the engine hands a node its input buffer (an AccumulateGrad can then
// steal it, as eager's does).
void hand_over(const Step& s, Frame::State& f) {
  f.grads.clear();
  for (ValueId v : s.inputs) {
    const bool dead = v != kNoValue &&
                      std::find(s.frees.begin(), s.frees.end(), v) != s.frees.end() &&
                      std::count(s.inputs.begin(), s.inputs.end(), v) == 1;
    if (dead) {
      f.grads.push_back(std::move(f.values[static_cast<size_t>(v)]));
    } else {
      f.grads.push_back(get(f.values, v));
    }
  }
}

// What an op returned against what its node declares: the one run-time owner of the count
// (a functional op's count is only known by running it; verify checks what the graph declares).
void check_output_count(size_t produced, const Step& s) {
  if (produced != s.outputs.size()) {
    throw ExecutionError("produced " + std::to_string(produced) + " outputs, graph expects " +
                         std::to_string(s.outputs.size()));
  }
}

void scatter(const Step& s, variable_list& results, Values& values) {
  check_output_count(results.size(), s);
  for (size_t k = 0; k < results.size(); ++k) {
    if (s.outputs[k] != kNoValue) values[static_cast<size_t>(s.outputs[k])] = std::move(results[k]);
  }
}

// validate_outputs ends in an internal assert when a grad (after its cast to grad_dtype) is not
// differentiable: say so in our words first.
void check_differentiable(const MetadataList& metadata, const Values& grads) {
  for (size_t k = 0; k < grads.size() && k < metadata.size(); ++k) {
    if (!metadata[k] || !grads[k].defined()) continue;
    const c10::ScalarType dtype = metadata[k]->grad_dtype().value_or(grads[k].scalar_type());
    if (!torch::autograd::isDifferentiableType(dtype)) {
      throw ExecutionError("validate_outputs: grad " + std::to_string(k) + " has dtype " +
                           c10::toString(dtype) + ", which is not differentiable");
    }
  }
}

// The dtype a leaf's gradient may have: its own, or the one set_grad_dtype gave it (any, where
// it allows a mismatch), as validate_outputs casts to.
bool grad_dtype_allowed(const at::Tensor& variable, c10::ScalarType dtype) {
  const auto* meta = torch::autograd::impl::get_autograd_meta(variable);
  if (meta == nullptr) return dtype == variable.scalar_type();
  if (meta->allow_grad_dtype_mismatch_) return true;
  return dtype == meta->grad_dtype(variable).value_or(variable.scalar_type());
}

// What eager guarantees before AccumulateGrad runs (validate_outputs gave the grad the
// variable's dtype, shape and device): a graph that breaks it would otherwise store a converted
// or misshapen .grad. (That the variable requires grad is checked at load, against the graph's
// record, since a tensor read back from a .pt file has lost the flag.)
void check_accumulate_grad(const at::Tensor& variable, const at::Tensor& grad) {
  if (!variable.defined()) throw ExecutionError("accumulate_grad into an undefined tensor");
  if (!variable.is_leaf()) throw ExecutionError("accumulate_grad into a tensor that is not a leaf");
  if (!grad_dtype_allowed(variable, grad.scalar_type()) || grad.device() != variable.device() ||
      !grad.sym_sizes().equals(variable.sym_sizes())) {
    std::ostringstream os;
    os << "accumulate_grad: grad " << grad.scalar_type() << grad.sizes() << " on " << grad.device()
       << " for a parameter " << variable.scalar_type() << variable.sizes() << " on "
       << variable.device();
    throw ExecutionError(os.str());
  }
}

// Puts `v` where `slot` says; containers are shared by reference, so copies walk the tree.
void put(std::vector<c10::IValue>& args, const SlotPath& slot, c10::IValue v) {
  if (slot.depth == 0) {
    args[slot.arg] = std::move(v);
    return;
  }
  c10::IValue container = args[slot.arg];
  for (size_t d = 0; d + 1 < slot.depth; ++d) {
    container = container.isList() ? container.toListRef()[slot.path[d]]
                                   : container.toTupleRef().elements()[slot.path[d]];
  }
  const uint32_t k = slot.path[slot.depth - 1];
  if (container.isList()) {
    container.toList().set(k, std::move(v));
  } else {
    container.toTuple()->unsafeSetElement(k, std::move(v));
  }
}

// Fills a call's args from the current values and drops those references when the step is
// done (or threw), so that dead tensors are freed at their last use.
class FilledArgs {
 public:
  FilledArgs(const CallStep& c, std::vector<c10::IValue>& args, const Values& values)
      : c_(c), args_(args) {
    for (const SlotPath& s : c.slots) {
      const at::Tensor& t = get(values, s.value);
      put(args, s, s.is_symint ? c10::IValue(t.item<int64_t>()) : c10::IValue(t));
    }
    if (!c.rebuilt) return;
    auto tensor_of = [&](ValueId v) { return get(values, v); };
    auto int_of = [&](ValueId v) { return get(values, v).item<int64_t>(); };
    for (const auto& [j, record] : c.rebuilt->args) {
      args[j] = ivalue_from_arg(c.rebuilt->pool.ref(record), tensor_of, int_of);
    }
  }
  ~FilledArgs() {
    for (const SlotPath& s : c_.slots) {
      if (!s.is_symint) put(args_, s, at::Tensor());
    }
    if (c_.rebuilt) {
      for (const auto& [j, record] : c_.rebuilt->args) args_[j] = c10::IValue();
    }
  }
  FilledArgs(const FilledArgs&) = delete;
  FilledArgs& operator=(const FilledArgs&) = delete;

 private:
  const CallStep& c_;
  std::vector<c10::IValue>& args_;
};

// Brackets the time spent inside torch for an observer.
class OpScope {
 public:
  OpScope(RunObserver* o, size_t node) : o_(o), node_(node) {
    if (o_ != nullptr) o_->op_begin(node_);
  }
  ~OpScope() {
    if (o_ != nullptr) o_->op_end(node_);
  }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  RunObserver* o_;
  size_t node_;
};

struct StepRunner {
  const Step& s;
  size_t index;
  Frame::State& f;
  RunObserver* obs;
  int64_t max_elements;
  const BelowAutograd& dispatch;
  OpaqueCalls* opaque;

  void operator()(const CallStep& c) const {
    variable_list out;
    {
      FilledArgs filled(c, f.args[index], f.values);
      if (c.op != nullptr) {
        gather(s, f);
        if (c.check) c.check(f.grads, f.args[index]);
        OpScope scope(obs, s.node);
        // Custom functions run user code under the caller's keys; see below_autograd.h.
        std::optional<c10::impl::ForceDispatchKeyGuard> caller;
        std::optional<c10::impl::ExcludeDispatchKeyGuard> untracked;
        if (c.op->is_custom_function) {
          caller.emplace(dispatch.caller_keys());
        } else if (c.untracked_views && dispatch.active()) {
          untracked.emplace(c10::DispatchKeySet(c10::DispatchKey::ADInplaceOrView));
        }
        out = c.op->fn(f.grads, f.args[index]);
      } else {
        f.stack.assign(f.args[index].begin(), f.args[index].end());
        check_aten_inputs(c.aten->schema(), f.stack);
        OpScope scope(obs, s.node);
        c.aten->callBoxed(f.stack);
        check_aten_results(c.aten->schema(), f.stack);
      }
      f.grads.clear();
    }
    if (c.op != nullptr) {
      for (size_t k = 0; k < out.size(); ++k) check_elements(out[k], k);
      return scatter(s, out, f.values);
    }
    check_output_count(f.stack.size(), s);
    for (size_t k = 0; k < s.outputs.size(); ++k) {
      if (s.outputs[k] == kNoValue) continue;
      c10::IValue& v = f.stack[k];
      if (v.isTensor()) check_elements(v.toTensor(), k);
      f.values[static_cast<size_t>(s.outputs[k])] = v.isTensor() ? v.toTensor() : at::Tensor();
    }
    f.stack.clear();
  }

  int64_t size_of(ValueId v) const { return get(f.values, v).item<int64_t>(); }

  // A crafted graph's sizes can make an op return a view of any logical size (SumBackward0
  // expands its grad to the saved sizes); every step reading it would then walk all of it.
  void check_elements(const at::Tensor& t, size_t k) const {
    if (!t.defined() || t.numel() <= max_elements) return;
    throw ExecutionError("output " + std::to_string(k) + " of shape " + c10::str(t.sizes()) +
                         " has " + std::to_string(t.numel()) +
                         " elements, more than the limit of " + std::to_string(max_elements) +
                         " (ExecutorOptions::max_tensor_elements)");
  }

  void operator()(const ValidateStep& v) const {
    MetadataList rebound;
    const bool symbolic = s.symbolic_args != nullptr;
    if (symbolic) {
      rebound = rebind_metadata(s.symbolic().at(0), [this](ValueId id) { return size_of(id); });
    }
    const MetadataList& metadata = symbolic ? rebound : v.metadata;
    gather(s, f);
    bool conforms = true;
    for (size_t k = 0; k < f.grads.size() && conforms; ++k) {
      conforms =
          !metadata[k] || !f.grads[k].defined() || metadata_accepts(*metadata[k], f.grads[k]);
    }
    if (!conforms) {
      check_differentiable(v.metadata, f.grads);
      OpScope scope(obs, s.node);
      torch::autograd::validate_outputs(metadata, f.grads,
                                        [](const std::string& msg) { return msg; });
    }
    scatter(s, f.grads, f.values);
    f.grads.clear();
  }

  void operator()(const AccumulateStep&) const {
    const at::Tensor& a = get(f.values, s.inputs[0]);
    const at::Tensor& b = get(f.values, s.inputs[1]);
    if (a.defined() && b.defined()) {
      OpScope scope(obs, s.node);
      set(0, a + b);
    } else {
      set(0, a.defined() ? a : b);
    }
  }

  void operator()(const AccumulateGradStep& acc) const {
    const at::Tensor& variable = get(f.values, s.inputs[0]);
    // Take a dead grad out of its slot so that AccumulateGrad may steal it, as eager does.
    at::Tensor grad;
    if (acc.steal && s.inputs[1] != kNoValue) {
      grad = std::move(f.values[static_cast<size_t>(s.inputs[1])]);
    } else {
      grad = get(f.values, s.inputs[1]);
    }
    if (!grad.defined()) return;
    check_accumulate_grad(variable, grad);
    OpScope scope(obs, s.node);
    const LeafGradLock lock(variable);
    at::Tensor& variable_grad = variable.mutable_grad();
    torch::autograd::AccumulateGrad::accumulateGrad(
        variable, variable_grad, grad, 1 + static_cast<size_t>(acc.has_post_hooks),
        [&variable_grad](at::Tensor&& update) { variable_grad = std::move(update); });
  }

  // A live node runs user code (hooks, a TorchScript graph, a reentrant backward) under the
  // caller's keys, as a custom function does.
  void operator()(const OpaqueStep& o) const {
    hand_over(s, f);
    variable_list out;
    {
      const c10::impl::ForceDispatchKeyGuard caller(dispatch.caller_keys());
      OpScope scope(obs, s.node);
      out = opaque->call(o.index, std::move(f.grads));
    }
    f.grads.clear();
    for (size_t k = 0; k < out.size(); ++k) check_elements(out[k], k);
    scatter(s, out, f.values);
  }

  void operator()(const BoxedGeometry& p) const { (*this)(*p); }
  void operator()(const CopySlicesGeometry& p) const;
  void operator()(const CopySlicesFlags& p) const;

  void set(size_t k, at::Tensor t) const {
    if (s.outputs[k] != kNoValue) f.values[static_cast<size_t>(s.outputs[k])] = std::move(t);
  }
};

void StepRunner::operator()(const CopySlicesGeometry& fixed) const {
  CopySlicesGeometry rebound;
  const bool symbolic = s.symbolic_args != nullptr;
  if (symbolic) {
    auto size = [this](ValueId id) { return size_of(id); };
    rebound = rebind_geometry(s.symbolic().at(0), s.symbolic().at(1), size);
  }
  const CopySlicesGeometry& p = symbolic ? rebound : fixed;
  const at::Tensor& grad = get(f.values, s.inputs[0]);
  if (!grad.defined()) {
    for (size_t k = 0; k < 3; ++k) set(k, at::Tensor());
    return;
  }
  if (!grad.sym_sizes().equals(p.base.sym_sizes())) {
    throw ExecutionError("copy_slices: grad of shape " + c10::str(grad.sizes()) +
                         " for a base of shape " + c10::str(p.base.sym_sizes()));
  }
  // The base's strides may span far more than its elements: bound what is allocated.
  const int64_t extent = geometry_extent(p.base.sizes(), p.base.strides());
  if (extent > max_elements) {
    throw ExecutionError("copy_slices: a base spanning " + std::to_string(extent) +
                         " elements, more than the limit of " + std::to_string(max_elements) +
                         " (ExecutorOptions::max_tensor_elements)");
  }
  OpScope scope(obs, s.node);
  at::Tensor result = grad.new_empty_strided_symint(p.base.sym_sizes(), p.base.sym_strides());
  result.copy_(grad);
  const auto offset = p.view.sym_storage_offset() - p.base.sym_storage_offset();
  at::Tensor slice = result.as_strided_symint(p.view.sym_sizes(), p.view.sym_strides(), offset);
  at::Tensor clone = slice.clone(at::MemoryFormat::Contiguous);
  set(0, std::move(result));
  set(1, std::move(slice));
  set(2, std::move(clone));
}

void StepRunner::operator()(const CopySlicesFlags& p) const {
  const at::Tensor& result = get(f.values, s.inputs[0]);
  const at::Tensor& grad_slice = get(f.values, s.inputs[1]);
  f.grads.assign(p.needs_input_grad.size(), at::Tensor());
  const size_t num_res = s.inputs.size() - 2;
  for (size_t i = 0; i < num_res && i < f.grads.size(); ++i) {
    const at::Tensor& r = get(f.values, s.inputs[i + 2]);
    if (!p.needs_input_grad[i] || !r.defined() || !result.defined()) continue;
    if (i == 0) {
      at::Tensor slice = grad_slice;
      OpScope scope(obs, s.node);
      slice.copy_(r);
      f.grads[0] = result;
    } else {
      f.grads[i] = r;
    }
  }
  scatter(s, f.grads, f.values);
  f.grads.clear();
}

}  // namespace

void run_step(const Step& step, size_t index, Frame::State& frame, const RunContext& run) {
  const StepRunner runner{step,          index,     frame, run.observer, run.max_elements,
                          *run.dispatch, run.opaque};
  // One profiler event per step, as eager's engine opens one per node.
  auto callbacks =
      run.traced ? at::getStepCallbacksUnlessEmpty(at::RecordScope::FUNCTION) : std::nullopt;
  if (C10_UNLIKELY(callbacks.has_value())) {
    at::RecordFunction scope(std::move(*callbacks));
    scope.before(std::string_view(*step.trace_name), c10::ArrayRef<const c10::IValue>());
    std::visit(runner, step.payload);
    return;
  }
  std::visit(runner, step.payload);
}

}  // namespace ca::detail
