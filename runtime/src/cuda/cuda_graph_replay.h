// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The seam between the executor and whole-backward CUDA-graph replay (ExecutorOptions::
// cuda_graph). The implementation lives in src/cuda/ and builds only when libtorch has CUDA;
// a CPU-only build links src/cuda/cuda_graph_unavailable.cpp instead, which refuses.

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <vector>

#include "ca/device_placement.h"
#include "ca/graph.h"

namespace ca::detail {

/// Runs the plan once, plainly, on `inputs` (already on the device), returning what
/// Executor::run returns: graph outputs, then the `.grad` of each grad target.
using PlainRun = std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>& inputs)>;

/// One captured CUDA graph of a whole backward and its static buffers. Not thread-safe: the
/// executor serializes runs.
class CudaGraphReplay {
 public:
  virtual ~CudaGraphReplay() = default;
  /// Copies `inputs` into the static buffers and replays (the first call allocates them, warms
  /// up on a side stream and captures). Returns copies of the graph outputs, then the caller's
  /// `.grad` of each grad target after accumulating the graph's gradient into it.
  virtual std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs) = 0;
};

/// Why `graph`, placed as `placement`, cannot be one CUDA graph ("" when it can). Pure: also
/// built without CUDA, and unit-tested on CPU.
std::string cuda_graph_refusal(const Graph& graph, const DevicePlacement& placement);

/// A CUDA-graph replay of the graph whose plain run is `plain`; `grad_targets` are the input
/// indices whose `.grad` it returns. Throws Error when this build has no CUDA.
std::unique_ptr<CudaGraphReplay> make_cuda_graph_replay(const Graph& graph,
                                                        const DevicePlacement& placement,
                                                        std::vector<size_t> grad_targets,
                                                        PlainRun plain);

}  // namespace ca::detail
