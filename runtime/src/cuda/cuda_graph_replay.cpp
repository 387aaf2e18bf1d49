// SPDX-License-Identifier: BSD-3-Clause
// Whole-backward CUDA-graph replay: static input buffers, warm-up on a side stream, one capture
// of a plain run with at::cuda::CUDAGraph, then copy-in + replay per run.
//
// `.grad` inside the graph: the buffers' `.grad` is reset before the capture, so the captured
// AccumulateGrad assigns (steals or clones) into a tensor of the graph's private pool, which
// every replay rewrites. After a replay that tensor holds the run's gradient, and the caller's
// tensor receives it through AccumulateGrad::accumulateGrad, exactly as eager would.
#include "cuda/cuda_graph_replay.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/functions/accumulate_grad.h>

#include <optional>

#include "ca/error.h"

namespace ca::detail {
namespace {

/// Plain runs before the capture: lazy initialisations (cuBLAS handles, workspaces, the
/// allocator's pools) happen there, never inside the capture.
constexpr int kWarmupRuns = 2;

class CudaGraphReplayImpl final : public CudaGraphReplay {
 public:
  CudaGraphReplayImpl(std::vector<c10::Device> devices, std::vector<size_t> grad_targets,
                      size_t num_outputs, PlainRun plain)
      : devices_(std::move(devices)),
        grad_targets_(std::move(grad_targets)),
        num_outputs_(num_outputs),
        plain_(std::move(plain)) {}

  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs) override {
    if (inputs.size() != devices_.size()) {
      throw InputError("expected " + std::to_string(devices_.size()) + " inputs, got " +
                       std::to_string(inputs.size()));
    }
    at::NoGradGuard no_grad;
    if (!graph_) capture(inputs);
    copy_in(inputs);
    graph_->replay();
    std::vector<at::Tensor> out;
    out.reserve(num_outputs_ + grad_targets_.size());
    for (size_t k = 0; k < num_outputs_; ++k) {
      out.push_back(outputs_[k].defined() ? outputs_[k].clone() : at::Tensor());
    }
    for (size_t j = 0; j < grad_targets_.size(); ++j) {
      out.push_back(accumulate_into(inputs[grad_targets_[j]], grads_[j]));
    }
    return out;
  }

 private:
  void capture(const std::vector<at::Tensor>& inputs);
  void copy_in(const std::vector<at::Tensor>& inputs);
  void reset_static_grads();
  static at::Tensor accumulate_into(const at::Tensor& variable, const at::Tensor& grad);

  std::vector<c10::Device> devices_;  ///< by input: where its static buffer lives
  std::vector<size_t> grad_targets_;
  size_t num_outputs_;
  PlainRun plain_;
  std::vector<at::Tensor> static_inputs_;
  std::vector<at::Tensor> outputs_;  ///< the graph outputs, in the graph's pool
  std::vector<at::Tensor> grads_;    ///< by grad target: its gradient, in the graph's pool
  std::optional<at::cuda::CUDAGraph> graph_;
};

// One multi-tensor copy (a launch or two, not one per input: a launch-bound backward has
// hundreds of inputs); the caller's own static buffers are skipped.
void CudaGraphReplayImpl::copy_in(const std::vector<at::Tensor>& inputs) {
  std::vector<at::Tensor> dst, src;
  dst.reserve(inputs.size());
  src.reserve(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    const at::Tensor& in = inputs[k];
    if (!in.defined() || in.data_ptr() == static_inputs_[k].data_ptr()) continue;
    if (in.sizes() != static_inputs_[k].sizes() || in.dtype() != static_inputs_[k].dtype()) {
      throw InputError("cuda_graph: input " + std::to_string(k) +
                       " differs in shape or dtype from the captured one");
    }
    dst.push_back(static_inputs_[k]);
    src.push_back(in.detach());
  }
  if (!dst.empty()) at::_foreach_copy_(dst, src, /*non_blocking=*/true);
}

void CudaGraphReplayImpl::reset_static_grads() {
  for (size_t k : grad_targets_) static_inputs_[k].mutable_grad().reset();
}

void CudaGraphReplayImpl::capture(const std::vector<at::Tensor>& inputs) {
  static_inputs_.reserve(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    // Same values and strides in our own memory on the placed device; requires_grad as given
    // (AccumulateGrad only writes .grad of tensors that require it).
    const at::Tensor& in = inputs[k];
    at::Tensor copy = in.defined() ? in.detach().to(devices_[k], /*non_blocking=*/false,
                                                    /*copy=*/true, at::MemoryFormat::Preserve)
                                   : in;
    if (in.defined() && in.requires_grad()) copy.requires_grad_(true);
    static_inputs_.push_back(std::move(copy));
  }
  const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
  c10::cuda::device_synchronize();
  try {
    c10::cuda::CUDAStreamGuard on_side(side);
    for (int i = 0; i < kWarmupRuns; ++i) {
      plain_(static_inputs_);
      reset_static_grads();
    }
    c10::cuda::device_synchronize();
    graph_.emplace();
    graph_->capture_begin();
    std::vector<at::Tensor> out;
    try {
      out = plain_(static_inputs_);
    } catch (...) {
      graph_->capture_end();  // leave the stream usable; the graph is dropped below
      throw;
    }
    graph_->capture_end();
    outputs_.assign(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(num_outputs_));
    for (size_t k : grad_targets_) grads_.push_back(static_inputs_[k].grad());
  } catch (const std::exception& e) {
    graph_.reset();
    static_inputs_.clear();
    throw Error(std::string("cuda_graph: capturing the backward failed: ") + e.what());
  }
  c10::cuda::device_synchronize();
}

// The caller's .grad receives the run's gradient as eager's AccumulateGrad would deliver it;
// the graph keeps its buffer, so a fresh .grad is a copy, never the buffer itself.
at::Tensor CudaGraphReplayImpl::accumulate_into(const at::Tensor& variable,
                                                const at::Tensor& grad) {
  if (!grad.defined()) return variable.grad();
  if (variable.device() != grad.device()) return grad.clone();  // a copied input's .grad
  at::Tensor& variable_grad = variable.mutable_grad();
  torch::autograd::AccumulateGrad::accumulateGrad(
      variable, variable_grad, grad, /*num_expected_refs=*/1,
      [&variable_grad](at::Tensor&& update) { variable_grad = std::move(update); });
  return variable_grad;
}

}  // namespace

std::unique_ptr<CudaGraphReplay> make_cuda_graph_replay(const Graph& graph,
                                                        const DevicePlacement& placement,
                                                        std::vector<size_t> grad_targets,
                                                        PlainRun plain) {
  std::vector<c10::Device> devices;
  for (const InputPlacement& p : placement.inputs) devices.push_back(p.device);
  return std::make_unique<CudaGraphReplayImpl>(std::move(devices), std::move(grad_targets),
                                               graph.outputs.size(), std::move(plain));
}

}  // namespace ca::detail
