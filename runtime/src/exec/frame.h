// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Per-run state of one replay: value slots, each call step's filled args, scratch buffers.
// Built once per frame from the plan and reused run after run, so the replay loop allocates
// nothing of its own.

#include <ATen/core/ivalue.h>
#include <ATen/core/stack.h>
#include <torch/csrc/autograd/variable.h>

#include <vector>

#include "ca/executor.h"
#include "exec/below_autograd.h"
#include "plan/plan.h"

namespace ca {

struct Frame::State {
  explicit State(const detail::Plan& plan);

  const detail::Plan* plan;                    ///< the plan this frame was made for
  std::vector<at::Tensor> values;              ///< by value id
  std::vector<at::Tensor> inputs;              ///< bound by the last run (static-buffer seam)
  std::vector<std::vector<c10::IValue>> args;  ///< by step; own copies of the templates
  torch::autograd::variable_list grads;        ///< scratch: a step's gathered inputs
  torch::jit::Stack stack;                     ///< scratch: an aten step's boxed stack
};

namespace detail {

/// How a run goes: its limits, its observer (may be null), and the dispatch keys its ops skip.
struct RunContext {
  RunObserver* observer = nullptr;
  int64_t max_elements = 0;  ///< ExecutorOptions::max_tensor_elements
  /// Some RecordFunction callback is registered (e.g. a profiler runs): each step is a
  /// RecordFunction scope named step.trace_name.
  bool traced = false;
  const BelowAutograd* dispatch = nullptr;  ///< the run's; never null during a run
  OpaqueCalls* opaque = nullptr;            ///< never null in a run of a plan with opaque steps
};

/// Runs one step on `frame`.
void run_step(const Step& step, size_t index, Frame::State& frame, const RunContext& run);

}  // namespace detail
}  // namespace ca
