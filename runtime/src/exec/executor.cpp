// SPDX-License-Identifier: BSD-3-Clause
#include "ca/executor.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <sstream>

#include "ca/error.h"
#include "cuda/cuda_graph_replay.h"
#include "exec/frame.h"
#include "leaf_lock.h"
#include "registry/op_entry.h"

namespace ca {
namespace {

using Clock = std::chrono::steady_clock;

std::string describe(c10::ScalarType dtype, c10::IntArrayRef sizes, c10::Device device) {
  std::ostringstream os;
  os << c10::toString(dtype) << sizes << " on " << device;
  return os.str();
}

void check_input(const GraphInput& gi, size_t k, const at::Tensor& t) {
  // Built only on failure: a run makes no strings.
  auto at = [&] { return "input " + std::to_string(k) + " (" + gi.name + ")"; };
  if (!t.defined()) throw InputError(at() + ": tensor is undefined");
  if (gi.kind != GraphInput::Kind::kTensor) {
    const bool ok = t.dim() == 0 &&
                    (gi.kind == GraphInput::Kind::kInt ? c10::isIntegralType(t.scalar_type(), false)
                                                       : c10::isFloatingType(t.scalar_type()));
    if (!ok) {
      throw InputError(at() + ": expected a 0-dim " +
                       (gi.kind == GraphInput::Kind::kInt ? "integer" : "floating") +
                       " tensor, got " + describe(t.scalar_type(), t.sizes(), t.device()));
    }
    return;
  }
  const TensorMeta& m = gi.meta;
  bool sizes_fit = t.dim() == static_cast<int64_t>(m.sizes.size());
  if (sizes_fit) {
    const c10::IntArrayRef sizes = t.sizes();  // once: a run checks every saved tensor
    for (size_t d = 0; sizes_fit && d < m.sizes.size(); ++d) {
      sizes_fit = m.sizes[d] == kDynamicSize || sizes[d] == m.sizes[d];
    }
  }
  if (t.scalar_type() != m.dtype || !sizes_fit || t.device() != m.device) {
    throw InputError(at() + ": expected " + describe(m.dtype, m.sizes, m.device) + ", got " +
                     describe(t.scalar_type(), t.sizes(), t.device()));
  }
}

// "nodes[17] (functional MulBackward0) on inputs (%3 Float[2, 4] on cpu, undefined): "
std::string failure_context(const Graph& g, size_t i, const std::vector<at::Tensor>& values) {
  std::string text = node_path(g, i) + " on inputs (";
  const c10::ArrayRef<ValueId> ins = g.ids(g.nodes[i].inputs);
  for (size_t k = 0; k < ins.size(); ++k) {
    if (k > 0) text += ", ";
    const at::Tensor* t = ins[k] == kNoValue ? nullptr : &values[static_cast<size_t>(ins[k])];
    if (t == nullptr || !t->defined()) {
      text += "undefined";
    } else {
      text +=
          "%" + std::to_string(ins[k]) + " " + describe(t->scalar_type(), t->sizes(), t->device());
    }
  }
  return text + "): ";
}

// A frame's own copy of an args template: lists and tuples are shared by reference in IValues,
// and each frame fills its own.
c10::IValue copy_containers(const c10::IValue& v) {
  if (v.isList()) {
    c10::impl::GenericList out(v.toList().elementType());
    out.reserve(v.toListRef().size());
    for (const c10::IValue& item : v.toListRef()) out.push_back(copy_containers(item));
    return out;
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> elems;
    for (const c10::IValue& e : v.toTupleRef().elements()) elems.push_back(copy_containers(e));
    return c10::ivalue::Tuple::create(std::move(elems));
  }
  return v;
}

ExecutionError failure(const Graph& g, size_t node, Frame::State& f, const std::string& what) {
  ExecutionError error(failure_context(g, node, f.values) + what);
  f.grads.clear();
  f.stack.clear();
  return error;
}

constexpr size_t kMaxPooledFrames = 8;

void check_device(c10::Device device) {
  if (device.is_cpu()) return;
  if (!device.is_cuda()) {
    throw Error("replay on " + device.str() + " is not supported; use cpu or cuda[:N]");
  }
  if (!at::hasCUDA()) {
    throw Error("replay on " + device.str() + " needs CUDA, which is not available here (" +
                (at::detail::getCUDAHooks().hasCUDART() ? "no CUDA device is visible"
                                                        : "this libtorch has no CUDA") +
                ")");
  }
  const int count = at::detail::getCUDAHooks().getNumGPUs();
  if (device.has_index() && device.index() >= count) {
    throw Error("replay on " + device.str() + ": only " + std::to_string(count) +
                " CUDA device(s) are visible");
  }
}

// The inputs as bound on the placed devices; only those on another device are copied.
std::vector<at::Tensor> moved_inputs(const DevicePlacement& p, const std::vector<at::Tensor>& in) {
  std::vector<at::Tensor> out(in.begin(), in.end());
  for (size_t k = 0; k < out.size() && k < p.inputs.size(); ++k) {
    if (out[k].defined() && out[k].device() != p.inputs[k].device) {
      // A leaf stays a leaf (its copy's .grad is what the run returns).
      const bool leaf = out[k].requires_grad();
      out[k] = out[k].detach().to(p.inputs[k].device).requires_grad_(leaf);
    }
  }
  return out;
}

bool needs_move(const DevicePlacement& p, const std::vector<at::Tensor>& in) {
  for (size_t k = 0; k < in.size() && k < p.inputs.size(); ++k) {
    if (in[k].defined() && in[k].device() != p.inputs[k].device) return true;
  }
  return false;
}

}  // namespace

struct Executor::Impl {
  std::unique_ptr<detail::Plan> plan;
  ExecutorStats stats;
  std::optional<DevicePlacement> placement;  // set when ExecutorOptions::device is
  mutable std::mutex pool_mutex;
  mutable std::vector<Frame> pool;  // idle frames for run(inputs)
  mutable std::mutex cuda_graph_mutex;
  std::unique_ptr<detail::CudaGraphReplay> cuda_graph;  // ExecutorOptions::cuda_graph
};

Executor::Executor(Graph graph, ExecutorOptions options) : impl_(std::make_unique<Impl>()) {
  const auto start = Clock::now();
  if (options.cuda_graph && !options.device) {
    throw Error("cuda_graph replay needs a CUDA device (ExecutorOptions::device)");
  }
  if (options.device) {
    // "cuda" is cuda:0, so that bound tensors compare equal to their placed device.
    if (options.device->is_cuda() && !options.device->has_index()) options.device->set_index(0);
    check_device(*options.device);
    impl_->placement = place_graph(graph, *options.device);
    if (options.cuda_graph) {
      const std::string refusal = detail::cuda_graph_refusal(graph, *impl_->placement);
      if (!refusal.empty()) throw Error("cannot replay this graph as a CUDA graph: " + refusal);
    }
    graph = retarget_graph(std::move(graph), *impl_->placement);
    impl_->stats.cpu_scalars_moved = impl_->placement->scalars_moved;
    impl_->stats.cpu_scalars_kept = impl_->placement->scalars_kept;
  }
  if (options.max_tensor_elements < 1) {
    throw Error("ExecutorOptions::max_tensor_elements must be >= 1, got " +
                std::to_string(options.max_tensor_elements));
  }
  impl_->plan =
      std::make_unique<detail::Plan>(detail::build_plan(detail::verify(std::move(graph), options)));
  const detail::Plan& plan = *impl_->plan;
  ExecutorStats& st = impl_->stats;
  st.nodes = plan.graph.nodes.size();
  st.plan_steps = plan.steps.size();
  st.validates_elided = plan.stats.validates_elided;
  st.meta_calls = plan.stats.meta_calls;
  st.meta_memo_hits = plan.stats.meta_memo_hits;
  st.meta_unknown = plan.stats.meta_unknown;
  st.captured_torch_version = plan.stats.schemas.captured_torch;
  st.same_torch = plan.stats.schemas.same_torch;
  st.ops_schema_checked = plan.stats.schemas.ops_checked;
  st.ops_schema_mismatched = plan.stats.schemas.mismatches.size();
  if (options.cuda_graph) {
    // The replay's plain run: a frame of its own, inputs already on the device.
    auto frame = std::make_shared<Frame>(make_frame());
    const Impl* impl = impl_.get();
    detail::PlainRun plain = [impl, frame](const std::vector<at::Tensor>& inputs) {
      return run_frame(*impl, *frame, nullptr, inputs, nullptr);
    };
    impl_->cuda_graph = detail::make_cuda_graph_replay(plan.graph, *impl_->placement,
                                                       plan.grad_targets, std::move(plain));
  }
  st.load_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

Executor::~Executor() = default;
Executor::Executor(Executor&&) noexcept = default;
Executor& Executor::operator=(Executor&&) noexcept = default;

const std::vector<size_t>& Executor::grad_targets() const { return impl_->plan->grad_targets; }
const Graph& Executor::graph() const { return impl_->plan->graph; }
const ExecutorStats& Executor::stats() const { return impl_->stats; }
const DevicePlacement* Executor::placement() const {
  return impl_->placement ? &*impl_->placement : nullptr;
}

bool Executor::runs_node(size_t node) const {
  const auto& steps = impl_->plan->steps;  // in node order
  const auto it = std::lower_bound(steps.begin(), steps.end(), node,
                                   [](const detail::Step& s, size_t n) { return s.node < n; });
  return it != steps.end() && it->node == node;
}

Frame Executor::make_frame() const { return Frame(std::make_unique<Frame::State>(*impl_->plan)); }

std::vector<at::Tensor> Executor::run(const std::vector<at::Tensor>& inputs,
                                      RunObserver* observer) const {
  return run_pooled(nullptr, inputs, observer, nullptr);
}

std::vector<at::Tensor> Executor::run_consuming(std::vector<at::Tensor>&& inputs,
                                                RunObserver* observer, OpaqueCalls* opaque) const {
  return run_pooled(&inputs, inputs, observer, opaque);
}

std::vector<at::Tensor> Executor::run_pooled(std::vector<at::Tensor>* consumed,
                                             const std::vector<at::Tensor>& inputs,
                                             RunObserver* observer, OpaqueCalls* opaque) const {
  if (impl_->cuda_graph) {
    std::lock_guard<std::mutex> lock(impl_->cuda_graph_mutex);
    return impl_->cuda_graph->run(inputs);
  }
  std::optional<Frame> frame;
  {
    std::lock_guard<std::mutex> lock(impl_->pool_mutex);
    if (!impl_->pool.empty()) {
      frame.emplace(std::move(impl_->pool.back()));
      impl_->pool.pop_back();
    }
  }
  if (!frame) frame.emplace(make_frame());
  std::vector<at::Tensor> out;
  try {
    out = run_frame(*impl_, *frame, consumed, inputs, observer, opaque);
  } catch (...) {
    frame->release();
    throw;
  }
  frame->state_->inputs.clear();  // pooled frames do not keep the caller's tensors alive
  std::lock_guard<std::mutex> lock(impl_->pool_mutex);
  if (impl_->pool.size() < kMaxPooledFrames) impl_->pool.push_back(std::move(*frame));
  return out;
}

std::vector<at::Tensor> Executor::run(Frame& frame, const std::vector<at::Tensor>& inputs,
                                      RunObserver* observer) const {
  if (impl_->cuda_graph) {
    throw Error("run: in cuda_graph mode the executor keeps its own buffers; use run(inputs)");
  }
  return run_frame(*impl_, frame, nullptr, inputs, observer);
}

std::vector<at::Tensor> Executor::run_frame(const Impl& impl, Frame& frame,
                                            std::vector<at::Tensor>* consumed,
                                            const std::vector<at::Tensor>& inputs,
                                            RunObserver* observer, OpaqueCalls* opaque) {
  const detail::Plan& plan = *impl.plan;
  const Graph& g = plan.graph;
  if (frame.state_ == nullptr || frame.state_->plan != &plan) {
    throw Error("run: the frame was made by another Executor (use this one's make_frame())");
  }
  if (plan.opaque_nodes > 0 && opaque == nullptr) {
    throw Error("run: the graph has " + std::to_string(plan.opaque_nodes) +
                " opaque node(s), live autograd nodes only their owner can call; replay it "
                "through run_consuming with an OpaqueCalls");
  }
  if (inputs.size() != g.inputs.size()) {
    throw InputError("expected " + std::to_string(g.inputs.size()) + " inputs, got " +
                     std::to_string(inputs.size()));
  }
  if (impl.placement && needs_move(*impl.placement, inputs)) {
    std::vector<at::Tensor> moved = moved_inputs(*impl.placement, inputs);
    if (consumed != nullptr) consumed->clear();  // the copies are the executor's own
    return run_frame(impl, frame, consumed == nullptr ? nullptr : &moved, moved, observer, opaque);
  }
  for (size_t k = 0; k < inputs.size(); ++k) check_input(g.inputs[k], k, inputs[k]);
  Frame::State& f = *frame.state_;
  if (consumed == nullptr) {
    f.inputs.assign(inputs.begin(), inputs.end());
    for (size_t k = 0; k < inputs.size(); ++k) f.values[k] = inputs[k];
  } else {  // keep only what outlives the run: the tensors whose .grad is returned
    f.inputs.assign(inputs.size(), at::Tensor());
    for (size_t k : plan.grad_targets) f.inputs[k] = inputs[k];
    for (size_t k = 0; k < inputs.size(); ++k) f.values[k] = std::move((*consumed)[k]);
    consumed->clear();
  }
  for (ValueId v : plan.input_frees) f.values[static_cast<size_t>(v)].reset();

  at::NoGradGuard no_grad;  // eager backward runs with grad mode off unless create_graph
  const detail::BelowAutograd below_autograd;
  // Profiler scopes per step only where a RecordFunction callback exists: asked once per run, so
  // that a replay without a profiler pays one check, not one per step. A profiler started in
  // the middle of a run sees the steps of the next run.
  const detail::RunContext run{observer, plan.max_tensor_elements, at::hasCallbacks(),
                               &below_autograd, opaque};
  size_t i = 0;
  try {
    for (; i < plan.steps.size(); ++i) {
      const detail::Step& step = plan.steps[i];
      if (observer != nullptr) observer->node_begin(step.node);
      detail::run_step(step, i, f, run);
      for (ValueId v : step.frees) f.values[static_cast<size_t>(v)].reset();
      if (observer != nullptr) observer->node_end(step.node);
    }
  } catch (Error& e) {  // ours: add the node, keep the type (an InputError stays one)
    e.add_context(failure_context(g, plan.steps[i].node, f.values));
    f.grads.clear();
    f.stack.clear();
    throw;
  } catch (const c10::Error& e) {
    throw failure(g, plan.steps[i].node, f, e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw failure(g, plan.steps[i].node, f, e.what());
  }

  std::vector<at::Tensor> out;
  out.reserve(plan.outputs.size() + plan.grad_targets.size());
  for (ValueId v : plan.outputs) {
    out.push_back(v == kNoValue ? at::Tensor() : f.values[static_cast<size_t>(v)]);
  }
  for (ValueId v : plan.outputs) {
    if (v != kNoValue) f.values[static_cast<size_t>(v)].reset();  // the caller owns them now
  }
  for (size_t k : plan.grad_targets) {
    const detail::LeafGradLock lock(f.inputs[k]);
    out.push_back(f.inputs[k].grad());
  }
  return out;
}

Frame::State::State(const detail::Plan& p) : plan(&p) {
  values.resize(static_cast<size_t>(p.graph.num_values));
  args.resize(p.steps.size());
  size_t max_inputs = 0;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const detail::Step& s = p.steps[i];
    max_inputs = std::max({max_inputs, s.inputs.size(), s.outputs.size()});
    const auto* call = std::get_if<detail::CallStep>(&s.payload);
    if (call == nullptr) continue;
    // A frame writes only along its slots' paths (rebuilt args are replaced whole): a built-in
    // op's other args stay the plan's, shared constants included. Custom functions run user
    // code and aten calls hand their args to kernels: those get copies of every container.
    const bool share = detail::is_builtin_functional(call->op);
    args[i].reserve(call->args.size());
    for (size_t j = 0; j < call->args.size(); ++j) {
      const bool filled = std::any_of(call->slots.begin(), call->slots.end(),
                                      [j](const detail::SlotPath& s) { return s.arg == j; });
      args[i].push_back(share && !filled ? call->args[j] : copy_containers(call->args[j]));
    }
    if (call->aten) stack.reserve(std::max(stack.capacity(), call->args.size() + 8));
  }
  grads.reserve(max_inputs);
}

Frame::Frame(std::unique_ptr<State> state) : state_(std::move(state)) {}
Frame::~Frame() = default;
Frame::Frame(Frame&&) noexcept = default;
Frame& Frame::operator=(Frame&&) noexcept = default;

const std::vector<at::Tensor>& Frame::bound_inputs() const { return state_->inputs; }

void Frame::release() {
  state_->inputs.clear();
  for (at::Tensor& t : state_->values) t.reset();
  state_->grads.clear();
  state_->stack.clear();
}

}  // namespace ca
