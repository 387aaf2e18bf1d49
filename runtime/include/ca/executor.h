#pragma once
/// @file
/// The executor: runs a ca::Graph on libtorch, Python-free.

#include <ATen/core/Tensor.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ca/graph.h"

namespace ca {

/// Options fixed when a graph is loaded.
struct ExecutorOptions {
  /// Device to replay on; unset = the devices recorded in the graph. Only CPU graphs replay
  /// on CPU in this version (CUDA placement is roadmap item 5).
  std::optional<c10::Device> device;
  /// Load a graph captured with another torch even where an op's recorded packed-args schema
  /// differs from this runtime's (each node's args are still type-checked against the runtime's
  /// schema). Graphs whose op schemas all match load without it.
  bool allow_version_mismatch = false;
};

/// Per-node timings of one run, filled when asked for (costs a clock read per node).
struct RunProfile {
  std::vector<double> node_seconds;  ///< by node index
};

/// Loads a graph once (ops resolved, args converted, last uses computed) and replays it.
/// Not thread-safe: one run at a time per Executor (runs share prepared argument buffers).
class Executor {
 public:
  /// Prepares `graph`. Throws FormatError for a structurally invalid graph and OpNotFoundError
  /// listing every op name that does not resolve.
  explicit Executor(Graph graph, ExecutorOptions options = {});
  ~Executor();
  Executor(Executor&&) noexcept;
  Executor& operator=(Executor&&) noexcept;

  /// Replays the graph. `inputs` has one tensor per graph input (int/double inputs as 0-dim
  /// tensors), checked for count, dtype, shape and device; InputError names the first mismatch.
  /// Writes `.grad` of the accumulate_grad targets with AccumulateGrad semantics and returns
  /// the graph outputs followed by those `.grad` tensors (see grad_targets()). A failing node
  /// throws ExecutionError naming its index and op.
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs, RunProfile* profile = nullptr);

  /// Graph-input indices whose `.grad` run() writes, in the order run() returns them.
  const std::vector<size_t>& grad_targets() const;
  /// The graph as loaded.
  const Graph& graph() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ca
