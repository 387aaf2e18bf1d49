// SPDX-License-Identifier: BSD-3-Clause
#include "distributed/grad_reducer.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include "distributed/backend_factory.h"

namespace ca::detail {
namespace {

bool written_since(const at::Tensor& grad, const std::optional<GradReducer::WeakImpl>& before,
                   uint32_t version_before) {
  if (!grad.defined()) return false;
  return !before || before->_unsafe_get_target() != grad.unsafeGetTensorImpl() ||
         grad.unsafeGetTensorImpl()->version_counter().current_version() != version_before;
}

}  // namespace

GradWrites grad_writes(const Executor& executor) {
  const Graph& g = executor.graph();
  GradWrites writes;
  std::vector<size_t> slot(g.inputs.size(), SIZE_MAX);  // by graph input: its entry in `captured`
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    if (node.kind == NodeKind::kOpaque) writes.opaque.push_back(n);
    if (node.kind != NodeKind::kAccumulateGrad || node.inputs.size == 0) continue;
    const auto input = static_cast<size_t>(g.ids(node.inputs)[0]);  // verified: a graph input
    if (slot[input] == SIZE_MAX) {
      slot[input] = writes.captured.size();
      writes.captured.push_back({input, n});
    } else {
      writes.captured[slot[input]].node = n;
    }
  }
  return writes;
}

GradReducer::GradReducer(std::shared_ptr<const DataParallelOptions> options)
    : options_(std::move(options)) {
  rank_ = options_->process_group->getRank();
  world_ = options_->process_group->getSize();
  buckets_ =
      layout_buckets(options_->parameters, options_->first_bucket_bytes, options_->bucket_bytes);
  for (size_t k = 0; k < options_->parameters.size(); ++k) {
    param_index_.emplace(options_->parameters[k].unsafeGetTensorImpl(), k);
  }
  grad_before_.resize(options_->parameters.size());
  version_before_.resize(options_->parameters.size());
  observer_.reducer = this;
}

GradReducer::~GradReducer() = default;

void GradReducer::Observer::node_end(size_t node) {
  reducer->launch_through(static_cast<int64_t>(node));
}

RunObserver* GradReducer::observer() { return &observer_; }

void GradReducer::begin() {
  const std::vector<at::Tensor>& params = options_->parameters;
  for (size_t k = 0; k < params.size(); ++k) {
    const at::Tensor& grad = params[k].grad();
    grad_before_[k].reset();
    if (grad.defined()) grad_before_[k].emplace(grad.getIntrusivePtr());
    version_before_[k] =
        grad.defined() ? grad.unsafeGetTensorImpl()->version_counter().current_version() : 0;
  }
  launch_after_.assign(buckets_.size(), std::numeric_limits<int64_t>::max());
  next_ = 0;
  finishing_ = false;
  works_.assign(buckets_.size(), {});
  launch_error_ = nullptr;
}

void GradReducer::plan_launches(const std::vector<at::Tensor>& inputs, const GradWrites& writes,
                                const std::vector<const at::Tensor*>& live_leaves) {
  if (!options_->overlap) return;
  // Each parameter's last writing node, found by identity among the graph's inputs and the
  // leaves of its live AccumulateGrads.
  const std::vector<at::Tensor>& params = options_->parameters;
  std::vector<int64_t> written_at(params.size(), -1);
  auto written = [&](const at::Tensor& leaf, size_t node) {
    const auto it = param_index_.find(leaf.unsafeGetTensorImpl());
    if (it != param_index_.end()) {
      written_at[it->second] = std::max(written_at[it->second], static_cast<int64_t>(node));
    }
  };
  for (const GradWrite& w : writes.captured) written(inputs[w.input], w.node);
  for (size_t k = 0; k < live_leaves.size() && k < writes.opaque.size(); ++k) {
    if (live_leaves[k] != nullptr) written(*live_leaves[k], writes.opaque[k]);
  }
  // Buckets leave in order: none before the one ahead of it.
  int64_t after = -1;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    for (size_t k : buckets_[b].params) after = std::max(after, written_at[k]);
    launch_after_[b] = after;
  }
  launch_through(-1);
}

void GradReducer::launch_through(int64_t node) {
  if (launch_error_) return;
  try {
    while (next_ < buckets_.size() && launch_after_[next_] <= node) launch(next_++);
  } catch (...) {
    launch_error_ = std::current_exception();
  }
}

std::string GradReducer::describe(size_t bucket) const {
  const GradBucket& b = buckets_[bucket];
  return "rank " + std::to_string(rank_) + " of " + std::to_string(world_) +
         ": all-reduce of gradient bucket " + std::to_string(bucket) + " of " +
         std::to_string(buckets_.size()) + " (" + std::to_string(b.params.size()) +
         " parameters, " + std::to_string(b.bytes) + " bytes of " +
         c10::toString(b.buffer.scalar_type()) + " on " + b.buffer.device().str() + ")";
}

void GradReducer::launch(size_t bucket) {
  GradBucket& b = buckets_[bucket];
  const std::vector<at::Tensor>& params = options_->parameters;
  std::vector<float> counts(b.params.size(), 0.0F);
  for (size_t i = 0; i < b.params.size(); ++i) {
    const size_t k = b.params[i];
    const at::Tensor& grad = params[k].grad();
    at::Tensor slot = b.buffer.narrow(0, b.offsets[i], params[k].numel());
    if (!written_since(grad, grad_before_[k], version_before_[k])) {
      slot.zero_();
      continue;
    }
    if (grad.is_sparse() || grad.sizes() != params[k].sizes()) {
      throw CommunicationError(describe(bucket) + ": parameter " + std::to_string(k) + " has a " +
                               (grad.is_sparse() ? "sparse" : "differently sized") +
                               " gradient; only dense gradients of the parameter's shape are "
                               "averaged");
    }
    slot.view(grad.sizes()).copy_(grad);
    counts[i] = 1.0F;
  }
  b.buffer.narrow(0, b.grad_elements, static_cast<int64_t>(counts.size()))
      .copy_(at::tensor(counts));
  try {
    works_[bucket] = options_->process_group->allreduce(b.tensors);
    ++launched_;
    if (!finishing_) ++launched_early_;
  } catch (const std::exception& e) {
    throw CommunicationError(describe(bucket) + " could not start: " + e.what());
  }
}

void GradReducer::finish() {
  finishing_ = true;
  launch_after_.assign(buckets_.size(), -1);  // every bucket may leave now
  launch_through(-1);
  if (launch_error_) {
    abandon();
    std::rethrow_exception(launch_error_);
  }
  for (size_t bucket = 0; bucket < buckets_.size(); ++bucket) {
    try {
      works_[bucket]->wait();
    } catch (const std::exception& e) {
      abandon();
      throw CommunicationError(describe(bucket) + " failed: " + detail::failure_text(e));
    }
  }
  at::NoGradGuard no_grad;
  const std::vector<at::Tensor>& params = options_->parameters;
  for (size_t bucket = 0; bucket < buckets_.size(); ++bucket) {
    GradBucket& b = buckets_[bucket];
    const at::Tensor users =
        b.buffer.narrow(0, b.grad_elements, static_cast<int64_t>(b.params.size()))
            .to(at::kCPU, at::kDouble)
            .contiguous();
    const double* used_by = users.data_ptr<double>();
    b.buffer.narrow(0, 0, b.grad_elements).div_(world_);
    for (size_t i = 0; i < b.params.size(); ++i) {
      if (used_by[i] == 0.0) continue;  // unused on every rank: .grad stays as it was
      const at::Tensor& param = params[b.params[i]];
      at::Tensor average = b.buffer.narrow(0, b.offsets[i], param.numel()).view(param.sizes());
      at::Tensor& grad = param.mutable_grad();
      if (grad.defined()) {
        grad.copy_(average);
      } else {
        grad = average.clone();
      }
    }
  }
  works_.assign(buckets_.size(), {});
}

void GradReducer::abandon() {
  works_.assign(buckets_.size(), {});
  next_ = buckets_.size();
}

}  // namespace ca::detail
