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
  /// Walks (`walk_fn`), looks the key up, captures on a miss, replays; runs `eager` instead
  /// (counted, with the reason) for what capture cannot take unless the options are strict.
  static std::vector<at::Tensor> step(CompiledBackward& cb,
                                      const std::function<std::unique_ptr<GraphWalk>()>& walk_fn,
                                      BackwardOptions options, const std::function<void()>& eager);
  /// Runs `eager`, counted as a fallback for `reason`.
  static void fall_back(CompiledBackward& cb, const std::string& reason,
                        const std::function<void()>& eager);
};

}  // namespace ca::detail
