// SPDX-License-Identifier: BSD-3-Clause
#include "ca/capture.h"

#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/functions/accumulate_grad.h>
#include <torch/csrc/autograd/functions/basic_ops.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/csrc/dynamo/compiled_autograd.h>

#include <set>
#include <string>
#include <typeinfo>
#include <unordered_map>

#include "arg_convert.h"
#include "ca/error.h"
#include "ca/op_registry.h"
#include "ca/version.h"
#include "capture/capture_walk.h"
#include "capture/graph_walk.h"
#include "capture/recorder.h"
#include "check.h"
#include "session/compiler_session.h"
#include "torch_compat.h"

namespace ca {
namespace {

namespace dyn = torch::dynamo::autograd;
using detail::AgNode;
using detail::node_label;
using detail::NodePtr;
using torch::autograd::variable_list;
using MetadataList = std::vector<std::optional<torch::autograd::InputMetadata>>;

// The gradient buffers of the nodes still to run; two contributions become an accumulate node.
class InputBuffers {
 public:
  explicit InputBuffers(detail::GraphBuilder* builder) : builder_(builder) {}

  void add(AgNode* fn, uint32_t input_nr, const at::Tensor& proxy) {
    auto& buffer = buffers_[fn];
    if (buffer.size() <= input_nr) buffer.resize(fn->num_inputs());
    at::Tensor& slot = buffer.at(input_nr);
    if (!slot.defined()) {
      slot = proxy;
      return;
    }
    const std::vector<ValueId> inputs{builder_->id_of(slot, "accumulate"),
                                      builder_->id_of(proxy, "accumulate")};
    builder_->add_node(NodeKind::kAccumulate, "", inputs, {}, {builder_->define_like(slot, &slot)});
  }

  /// The gradient gathered so far for input `input_nr` of `fn` (undefined if none).
  at::Tensor peek(AgNode* fn, uint32_t input_nr) const {
    auto it = buffers_.find(fn);
    return it == buffers_.end() || it->second.size() <= input_nr ? at::Tensor()
                                                                 : it->second[input_nr];
  }

  variable_list take(AgNode* fn) {
    auto it = buffers_.find(fn);
    if (it == buffers_.end()) return variable_list(fn->num_inputs());
    variable_list out = std::move(it->second);
    buffers_.erase(it);
    out.resize(fn->num_inputs());
    return out;
  }

 private:
  detail::GraphBuilder* builder_;
  std::unordered_map<AgNode*, variable_list> buffers_;
};

// Pass 2's state: the walk's collected state, and the graph being built.
struct CaptureState {
  dyn::AutogradCompilerCall& compiler;
  std::vector<dyn::NodeCall*>& calls;
  detail::GraphBuilder builder;
};

// "grad_output.0", "param.7", "saved.3.MulBackward0": where each input came from.
// A leaf that requires grad is a parameter even when a node saved it before its AccumulateGrad
// collected it (the first collector is the input's origin).
std::string input_name(const CaptureState& st, size_t k) {
  const size_t origin = st.compiler.tensor_args.input_origins.at(k);
  const AgNode& node = *st.calls.at(origin)->node;
  if (dynamic_cast<const torch::autograd::GraphRoot*>(&node) != nullptr) {
    return "grad_output." + std::to_string(k);
  }
  const at::Tensor& real = st.compiler.tensor_args.inputs.at(k);
  if (dynamic_cast<const torch::autograd::AccumulateGrad*>(&node) != nullptr ||
      (real.is_leaf() && real.requires_grad())) {
    return "param." + std::to_string(k);
  }
  return "saved." + std::to_string(k) + "." + node.name();
}

// Every collected tensor becomes a graph input with a meta proxy.
void bind_inputs(CaptureState& st) {
  auto& tensors = st.compiler.tensor_args;
  for (size_t k = 0; k < tensors.inputs.size(); ++k) {
    const at::Tensor& real = tensors.inputs[k];
    tensors.lookup(real).proxy_tensor = st.builder.add_input(real, input_name(st, k));
  }
  for (auto& lifted : st.compiler.lifted_ivalue_args.args) lifted.proxy = *lifted.actual_ptr;
}

// validate_outputs, emitted after each node with the metadata of its next edges.
variable_list record_validate(CaptureState& st, AgNode& fn, const MetadataList& metadata,
                              const variable_list& outputs) {
  const Arg metadata_arg = detail::constant_arg_from_ivalue(
      dyn::IValuePacker<MetadataList>::pack(metadata),
      dyn::IValuePacker<MetadataList>::packed_type(), fn.name() + " output metadata");
  variable_list validated(outputs.size());
  std::vector<ValueId> inputs;
  std::vector<ValueId> defined;
  for (size_t i = 0; i < outputs.size(); ++i) {
    inputs.push_back(st.builder.id_of(outputs[i], fn.name() + " outputs"));
    defined.push_back(st.builder.define_like(outputs[i], &validated[i]));
  }
  st.builder.add_node(NodeKind::kValidateOutputs, "validate_outputs", inputs, {metadata_arg},
                      defined);
  return validated;
}

// An opaque node: the live node itself runs at replay (with its hooks and validate_outputs, as
// the engine's call_function runs it), so only its gradients are recorded. Each output a later
// node reads gets a proxy shaped as that node's input metadata says (what validate_outputs
// makes of it).
variable_list record_opaque(CaptureState& st, AgNode& fn, const variable_list& inputs,
                            const detail::GraphWalk& walk) {
  std::vector<ValueId> ids;
  ids.reserve(inputs.size());
  for (const at::Tensor& t : inputs) ids.push_back(st.builder.id_of(t, fn.name() + " inputs"));
  variable_list outputs(fn.num_outputs());
  std::vector<ValueId> defined(fn.num_outputs(), kNoValue);
  for (size_t k = 0; k < outputs.size(); ++k) {
    const auto& next = fn.next_edge(k);
    if (!next.is_valid() || !walk.feeds(next.function.get())) continue;
    const auto& md = next.function->input_metadata(next.input_nr);
    if (md.is_nested_tensor() || md.is_tensor_subclass()) {
      throw CaptureError("output " + std::to_string(k) +
                         " goes to a nested tensor or tensor subclass, which capture cannot "
                         "shape");
    }
    const auto dtype = compat::edge_grad_dtype(md);
    const c10::SymIntArrayRef shape = md.shape_as_dim_vector();
    defined[k] =
        st.builder.define(C10_AS_INTARRAYREF_SLOW(shape),
                          dtype.value_or(c10::typeMetaToScalarType(md.dtype())), &outputs[k]);
  }
  st.builder.add_node(NodeKind::kOpaque, fn.name(), ids, {}, defined);
  return outputs;
}

// The graph outputs: each tap's gradient, read when its node is about to run (all contributions
// are in by then) or, for nodes that do not run, once every node has run.
class Taps {
 public:
  explicit Taps(const detail::GraphWalk& walk) : walk_(walk), values_(walk.taps.size()) {}

  void before(const AgNode* fn, const variable_list& inputs) {
    for (size_t t = 0; t < walk_.taps.size(); ++t) {
      if (walk_.taps[t].node == fn) values_[t] = inputs.at(walk_.taps[t].input_nr);
    }
  }

  void finish(const InputBuffers& buffers, detail::GraphBuilder& builder) {
    for (size_t t = 0; t < walk_.taps.size(); ++t) {
      const detail::GradTap& tap = walk_.taps[t];
      if (tap.node != nullptr && !values_[t].defined()) {
        values_[t] = buffers.peek(tap.node, tap.input_nr);
      }
      builder.graph().outputs.push_back(builder.id_of(values_[t], "graph outputs"));
    }
  }

 private:
  const detail::GraphWalk& walk_;
  variable_list values_;
};

// Pass 2, as upstream's capture loop: apply_with_saved on proxies, recording every call.
void trace_all(CaptureState& st, const detail::GraphWalk& walk,
               const detail::CaptureObserver& observe) {
  const std::vector<NodePtr>& order = walk.order;
  std::vector<std::optional<c10::SymInt>> sizes(st.compiler.all_size_inputs.size());
  dyn::TraceState state(std::move(sizes), 0);
  InputBuffers buffers(&st.builder);
  Taps taps(walk);
  for (size_t i = 0; i < order.size(); ++i) {
    AgNode& fn = *order[i];
    variable_list inputs = buffers.take(&fn);
    taps.before(&fn, inputs);
    variable_list outputs;
    try {
      if (walk.is_opaque(i)) {
        outputs = record_opaque(st, fn, inputs, walk);
      } else {
        MetadataList metadata;
        outputs = detail::apply_node(st.compiler, state, *st.calls[i], fn, inputs, &metadata);
        if (!outputs.empty()) outputs = record_validate(st, fn, metadata, outputs);
      }
      if (observe) observe("after " + node_label(fn, i));
    } catch (ca::Error& e) {
      e.add_context(node_label(fn, i) + ": ");
      throw;
    } catch (const c10::Error& e) {
      throw CaptureError(node_label(fn, i) + ": " + e.what_without_backtrace());
    }
    for (size_t k = 0; k < outputs.size() && k < fn.num_outputs(); ++k) {
      const auto& next = fn.next_edge(k);
      if (next.is_valid() && outputs[k].defined() && walk.feeds(next.function.get())) {
        buffers.add(next.function.get(), next.input_nr, outputs[k]);
      }
    }
  }
  taps.finish(buffers, st.builder);
}

}  // namespace

namespace detail {

CaptureResult capture_walk(GraphWalk& walk, const CaptureObserver& observer) {
  OpRegistry::global();  // harvest before our session takes the process-wide interface slot
  CaptureState st{walk.compiler, walk.calls, {}};
  st.builder.graph().torch_version = runtime_torch_version();
  bind_inputs(st);
  {
    Recorder recorder(&st.builder, &observer);
    CompilerSession session(recorder);
    trace_all(st, walk, observer);
  }
  if (observer) observer("finish");
  CaptureResult result;
  result.graph = std::move(st.builder.finish());
  result.inputs = std::move(st.builder.real_inputs());
  return result;
}

}  // namespace detail

namespace {

// A graph keeps a tensor's values, not its autograd history. A custom function holding a tensor
// that requires grad in saved_data may differentiate through it in its backward (a reentrant
// backward), which would fail once the graph is replayed from a file, where that tensor is a
// plain input. A custom function's packed args start with its saved_data: the keys, then one
// value per key. The trainer API replays in process, on the tensors themselves, and allows it.
void refuse_saved_data_history(const CaptureResult& cap) {
  std::set<std::string> custom;
  for (const OpSchema& s : cap.graph.op_schemas) {
    if (s.is_custom_function) custom.insert(s.op);
  }
  for (size_t i = 0; i < cap.graph.nodes.size(); ++i) {
    const Node& n = cap.graph.nodes[i];
    const ArgRefs args = cap.graph.args(n);
    if (n.kind != NodeKind::kFunctional || custom.count(std::string(cap.graph.op(n))) == 0 ||
        args.empty()) {
      continue;
    }
    const ArgRef keys = args[0];
    CA_CHECK(keys.kind() == Arg::Kind::kList, "a custom function's packed args start with keys");
    std::set<std::string> offending;  // sorted: saved_data's own order is a hash map's
    auto value = ++args.begin();      // one value per key follows the keys
    for (ArgRef key : keys.items()) {
      if (value == args.end()) break;
      const ArgRef v = *value++;
      if (v.kind() == Arg::Kind::kTensor && v.ref() >= 0 &&
          static_cast<size_t>(v.ref()) < cap.inputs.size() &&
          cap.inputs[static_cast<size_t>(v.ref())].requires_grad()) {
        offending.insert("saved_data[\"" + key.s() + "\"]");
      }
    }
    if (offending.empty()) continue;
    std::string which;
    for (const std::string& o : offending) which += (which.empty() ? "" : ", ") + o;
    throw CaptureError(
        "node " + std::to_string(i) + " (custom function " + std::string(cap.graph.op(n)) +
        "): " + which +
        " holds a tensor that requires grad. A graph keeps its values but not its autograd "
        "history, so a backward that differentiates through it (a reentrant backward, as "
        "checkpointing runs) would fail at replay. Store it detached if the backward only reads "
        "it; ca::CompiledBackward and ca::enable() replay such functions in process");
  }
}

}  // namespace

CaptureResult capture(const std::vector<at::Tensor>& roots, const std::vector<at::Tensor>& grads,
                      const CaptureOptions& options) {
  OpRegistry::global();  // harvest first: a failed walk must not leave it half-done
  std::unique_ptr<detail::GraphWalk> walk =
      detail::walk_from_root(detail::make_root(roots, grads), /*keys=*/false);
  CaptureResult cap = detail::capture_walk(*walk);
  refuse_saved_data_history(cap);  // before anything is released: a refusal leaves the graph
  if (options.release_variables) {
    for (const NodePtr& fn : walk->order) fn->release_variables();
  }
  return cap;
}

}  // namespace ca
