// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// One backward step of a CompiledBackward, from whatever builds the walk: backward() walks from
// root tensors, the engine hook of ca::enable() from the engine's own GraphRoot.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ca/compiled_backward.h"
#include "capture/graph_walk.h"

namespace ca::detail {

struct BackwardAccess {
  /// Makes the step's GraphRoot (throws CaptureError for roots it cannot take).
  using RootFn = std::function<NodePtr()>;
  using EagerFn = std::function<std::vector<at::Tensor>()>;

  /// Checks the graph under `root_fn()` against the graph used last (StepCheck); where that is
  /// not it, walks it for `targets` and looks its key up, capturing on a miss. Then replays and
  /// feeds retain_grad hooks; returns grad()'s outputs (if `targets` has any) followed by the
  /// .grads written. Runs `eager`
  /// instead (counted, with the reason) for what capture cannot take unless the options are
  /// strict, and returns what it returns. With data_parallel, a call that `writes_grads` (a
  /// backward, not a grad()) averages the parameters' .grads over the ranks before it returns.
  static std::vector<at::Tensor> step(CompiledBackward& cb, const RootFn& root_fn,
                                      const WalkTargets& targets, BackwardOptions options,
                                      const EagerFn& eager, bool writes_grads);
  /// Runs `eager`, counted as a fallback for `reason` (averaging as step() does); step() calls
  /// it, inside its own step.
  static std::vector<at::Tensor> fall_back(CompiledBackward& cb, const std::string& reason,
                                           const EagerFn& eager, bool writes_grads);
  /// Whether the calling thread is inside step(): a backward() begun there (an eager
  /// fallback's, a replayed custom function's) belongs to that step and runs eagerly.
  static bool in_step();
};

}  // namespace ca::detail
