#include "ca/executor.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <chrono>
#include <sstream>

#include "ca/error.h"
#include "executor/prepared.h"

namespace ca {
namespace {

using Clock = std::chrono::steady_clock;

std::string describe(c10::ScalarType dtype, c10::IntArrayRef sizes, c10::Device device) {
  std::ostringstream os;
  os << c10::toString(dtype) << sizes << " on " << device;
  return os.str();
}

void check_input(const GraphInput& gi, size_t k, const at::Tensor& t) {
  const std::string at = "input " + std::to_string(k) + " (" + gi.name + ")";
  if (!t.defined()) throw InputError(at + ": tensor is undefined");
  if (gi.kind != GraphInput::Kind::kTensor) {
    const bool ok = t.dim() == 0 &&
                    (gi.kind == GraphInput::Kind::kInt ? c10::isIntegralType(t.scalar_type(), false)
                                                       : c10::isFloatingType(t.scalar_type()));
    if (!ok) {
      throw InputError(at + ": expected a 0-dim " +
                       (gi.kind == GraphInput::Kind::kInt ? "integer" : "floating") +
                       " tensor, got " + describe(t.scalar_type(), t.sizes(), t.device()));
    }
    return;
  }
  const TensorMeta& m = gi.meta;
  if (t.scalar_type() != m.dtype || t.sizes() != c10::IntArrayRef(m.sizes) ||
      t.device() != m.device) {
    throw InputError(at + ": expected " + describe(m.dtype, m.sizes, m.device) + ", got " +
                     describe(t.scalar_type(), t.sizes(), t.device()));
  }
}

std::string node_label(const Graph& g, size_t i) {
  const Node& n = g.nodes[i];
  std::string label = "node " + std::to_string(i) + " (" + node_kind_name(n.kind);
  if (!n.op.empty() && n.kind != NodeKind::kValidateOutputs) label += " " + n.op;
  if (n.kind == NodeKind::kValidateOutputs && i > 0 && !g.nodes[i - 1].op.empty()) {
    label += " of " + g.nodes[i - 1].op;
  }
  return label + ")";
}

// "node 17 (functional MulBackward0) on inputs (%3 Float[2, 4] on cpu, undefined): "
std::string failure_context(const Graph& g, size_t i, const std::vector<at::Tensor>& values) {
  std::string text = node_label(g, i) + " on inputs (";
  const auto& ins = g.nodes[i].inputs;
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

}  // namespace

struct Executor::Impl {
  detail::PreparedGraph prepared;
};

Executor::Executor(Graph graph, ExecutorOptions options) : impl_(std::make_unique<Impl>()) {
  if (options.device.has_value() && !options.device->is_cpu()) {
    throw Error("replay on " + options.device->str() +
                " is not supported by this runtime yet; only CPU replay is available");
  }
  impl_->prepared = detail::prepare(std::move(graph), options.allow_version_mismatch);
}

Executor::~Executor() = default;
Executor::Executor(Executor&&) noexcept = default;
Executor& Executor::operator=(Executor&&) noexcept = default;

const std::vector<size_t>& Executor::grad_targets() const { return impl_->prepared.grad_targets; }
const Graph& Executor::graph() const { return impl_->prepared.graph; }

std::vector<at::Tensor> Executor::run(const std::vector<at::Tensor>& inputs, RunProfile* profile) {
  detail::PreparedGraph& pg = impl_->prepared;
  const Graph& g = pg.graph;
  if (inputs.size() != g.inputs.size()) {
    throw InputError("expected " + std::to_string(g.inputs.size()) + " inputs, got " +
                     std::to_string(inputs.size()));
  }
  std::vector<at::Tensor> values(static_cast<size_t>(g.num_values));
  for (size_t k = 0; k < inputs.size(); ++k) {
    check_input(g.inputs[k], k, inputs[k]);
    values[k] = inputs[k];
  }
  for (ValueId v : pg.input_frees) values[static_cast<size_t>(v)].reset();
  if (profile != nullptr) profile->node_seconds.assign(pg.nodes.size(), 0.0);

  at::NoGradGuard no_grad;  // eager backward runs with grad mode off unless create_graph
  size_t i = 0;
  try {
    for (; i < pg.nodes.size(); ++i) {
      Clock::time_point start{};
      if (profile != nullptr) start = Clock::now();
      detail::run_node(pg.nodes[i], g.nodes[i], values);
      for (ValueId v : pg.nodes[i].frees) values[static_cast<size_t>(v)].reset();
      if (profile != nullptr) {
        profile->node_seconds[i] = std::chrono::duration<double>(Clock::now() - start).count();
      }
    }
  } catch (const c10::Error& e) {
    throw ExecutionError(failure_context(g, i, values) + e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw ExecutionError(failure_context(g, i, values) + e.what());
  }

  std::vector<at::Tensor> out;
  for (ValueId v : g.outputs) out.push_back(values[static_cast<size_t>(v)]);
  for (size_t k : pg.grad_targets) out.push_back(inputs[k].grad());
  return out;
}

}  // namespace ca
