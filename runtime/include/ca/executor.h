// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file
/// The executor: runs a ca::Graph on libtorch, Python-free. Load builds an immutable plan; each
/// run works in a Frame, so one Executor may run on several threads at once.

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ca/device_placement.h"
#include "ca/graph.h"

namespace ca {

/// Options fixed when a graph is loaded.
struct ExecutorOptions {
  /// Device to replay on; unset = the devices recorded in the graph, inputs checked against
  /// them. Set: the graph is retargeted to it at load (see ca/device_placement.h: recorded
  /// devices rewritten, CPU scalars moved by upstream's rule), inputs on another device are
  /// copied there at bind, and outputs and `.grad` are on it. The `.grad` of an input that was
  /// copied is the copy's (returned by run(); the caller's tensor is not written). A CUDA
  /// device needs a libtorch with CUDA and a visible device: Error otherwise.
  std::optional<c10::Device> device;
  /// Replay the whole backward as one CUDA graph (needs a CUDA `device`): static input buffers,
  /// warm-up on a side stream, one capture at the first run; each run copies the inputs into
  /// the static buffers and replays. Outputs are returned as copies; each `.grad` is accumulated
  /// from the graph's static gradient buffer into the caller's tensor (AccumulateGrad semantics,
  /// so a fresh `.grad` is a copy). Runs are serialized. Refused at load (Error naming the
  /// reason) for graphs a CUDA graph cannot hold: a CPU scalar that stays on CPU, a custom
  /// function, symbolic sizes or lifted host scalars. Refused in a build without CUDA.
  bool cuda_graph = false;
  /// Load a graph captured with another torch even where an op's recorded packed-args schema
  /// differs from this runtime's (each node's args are still type-checked against the runtime's
  /// schema). Graphs whose op schemas all match load without it.
  bool allow_version_mismatch = false;
  /// Largest element count (logical: views count in full) any replay step may produce. A crafted
  /// graph's saved sizes can make a step return a view of any size (SumBackward0 expands its
  /// grad to them), which the steps reading it would then walk for hours; past this, the run
  /// fails with ExecutionError naming the node and output. Must be >= 1; the default (2^36,
  /// 68.7 G elements) is past any tensor one device holds.
  int64_t max_tensor_elements = int64_t{1} << 36;
  /// Accept opaque nodes (NodeKind::kOpaque: live autograd nodes, in graphs the trainer API
  /// captured in process). Each run of a graph holding one then needs an OpaqueCalls
  /// (run_consuming's `opaque`). Without it such a graph is refused at load (FormatError naming
  /// the node). Opaque nodes also refuse `cuda_graph` and keep CPU scalars they read on CPU.
  bool opaque_nodes = false;
};

/// What a run calls for the graph's opaque nodes: the live autograd nodes they stand for, which
/// the caller (the trainer API) holds for this run. Called on the running thread, in graph
/// order, under the dispatch keys and grad mode the caller ran the replay with.
class OpaqueCalls {
 public:
  virtual ~OpaqueCalls() = default;
  /// Runs the graph's `index`-th opaque node (counting opaque nodes only, in node order) on
  /// `grads` (one per node input; undefined where no gradient arrived) and returns one tensor
  /// per node output. What it throws fails the run as ExecutionError naming the node.
  virtual std::vector<at::Tensor> call(size_t index, std::vector<at::Tensor>&& grads) = 0;
};

/// What load made of the graph.
struct ExecutorStats {
  size_t nodes = 0;             ///< nodes in the graph
  size_t plan_steps = 0;        ///< steps a run executes (nodes minus elided ones)
  size_t validates_elided = 0;  ///< validate_outputs nodes proven no-ops at load and removed
  size_t meta_calls = 0;        ///< functional ops run once on meta tensors to infer metadata
  size_t meta_memo_hits = 0;    ///< inferences answered by an identical earlier call
  size_t meta_unknown = 0;      ///< functional nodes whose output metadata stayed unknown
  double load_ms = 0.0;         ///< wall time of validation, binding and planning
  std::string captured_torch_version;  ///< the torch that captured the graph ("" unrecorded)
  bool same_torch = false;             ///< captured with this runtime's torch release
  size_t ops_schema_checked = 0;       ///< built-in ops whose recorded schema was compared
  size_t ops_schema_mismatched = 0;    ///< of those, accepted by allow_version_mismatch
  size_t cpu_scalars_moved = 0;        ///< CPU 0-dim inputs moved to `device` (placement)
  size_t cpu_scalars_kept = 0;         ///< CPU 0-dim inputs that stay on CPU (placement)
};

/// Watches a run, step by step. Every callback gets the graph node index. `op_begin`/`op_end`
/// bracket the time spent inside torch (op functions, dispatcher calls, validate_outputs,
/// AccumulateGrad); the rest of a node's time is the runtime's own. Callbacks run on the
/// thread that runs, must not throw, and are not called at all when no observer is given.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void node_begin(size_t /*node*/) {}
  virtual void op_begin(size_t /*node*/) {}
  virtual void op_end(size_t /*node*/) {}
  virtual void node_end(size_t /*node*/) {}
};

class Executor;

/// Per-run state of one Executor: value slots, filled argument lists, scratch buffers. Reusing
/// a frame makes a run allocate nothing of the runtime's own. A frame belongs to the Executor
/// that made it, must not outlive it, and serves one run at a time; keep one per thread.
/// Movable, not copyable.
class Frame {
 public:
  ~Frame();
  Frame(Frame&&) noexcept;
  Frame& operator=(Frame&&) noexcept;

  /// The inputs bound by the last run on this frame (empty before the first run or after
  /// release()). The frame keeps them referenced, so their buffers stay fixed between runs.
  const std::vector<at::Tensor>& bound_inputs() const;
  /// Drops every tensor the frame references (bound inputs, values left by a failed run).
  void release();

  struct State;  ///< internal

 private:
  friend class Executor;
  explicit Frame(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

/// Loads a graph once (ops resolved, args converted, validate_outputs elided where proven,
/// last uses computed) and replays it. run() is const and thread-safe: concurrent runs each
/// use their own Frame. Runs that write `.grad` of the same tensors must not overlap.
class Executor {
 public:
  /// Prepares `graph`. Throws FormatError for a structurally invalid graph or args that do not
  /// fit an op's schema, and OpNotFoundError listing every op name that does not resolve.
  explicit Executor(Graph graph, ExecutorOptions options = {});
  ~Executor();
  Executor(Executor&&) noexcept;
  Executor& operator=(Executor&&) noexcept;

  /// Replays the graph. `inputs` has one tensor per graph input (int/double inputs as 0-dim
  /// tensors), checked for count, dtype, shape and device; InputError names the first mismatch.
  /// Writes `.grad` of the accumulate_grad targets with AccumulateGrad semantics and returns
  /// the graph outputs followed by those `.grad` tensors (see grad_targets()). A failing node
  /// throws ExecutionError naming its index and op. Takes a frame from a small internal pool
  /// (made on demand, returned after the run, its bound inputs released).
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs,
                              RunObserver* observer = nullptr) const;
  /// As run(inputs, observer), in the caller's `frame` (made by this Executor's make_frame();
  /// Error otherwise, and in cuda_graph mode, which keeps its own buffers). The frame keeps
  /// `inputs` referenced until its next run or release().
  std::vector<at::Tensor> run(Frame& frame, const std::vector<at::Tensor>& inputs,
                              RunObserver* observer = nullptr) const;
  /// As run(inputs, observer), consuming `inputs`: the executor then holds the only references
  /// the caller handed over, so each input is freed right after its last use, as eager backward
  /// frees saved tensors (accumulate_grad targets are kept to return their .grad). The trainer
  /// API replays this way. `opaque` runs the graph's opaque nodes; a graph that has some and
  /// runs without it (or through run()) throws Error before any step.
  std::vector<at::Tensor> run_consuming(std::vector<at::Tensor>&& inputs,
                                        RunObserver* observer = nullptr,
                                        OpaqueCalls* opaque = nullptr) const;
  /// A new frame for run(Frame&, ...).
  Frame make_frame() const;

  /// Graph-input indices whose `.grad` run() writes, in the order run() returns them.
  const std::vector<size_t>& grad_targets() const;
  /// The graph as loaded (retargeted when ExecutorOptions::device was set).
  const Graph& graph() const;
  /// What load made of the graph.
  const ExecutorStats& stats() const;
  /// Where each input is bound; null unless ExecutorOptions::device was set.
  const DevicePlacement* placement() const;
  /// Whether a replay runs graph node `node`; false for nodes load removed (validate_outputs
  /// proven no-ops) and for indices past the graph's nodes.
  bool runs_node(size_t node) const;

 private:
  // Takes a pooled frame, runs, returns the frame to the pool.
  std::vector<at::Tensor> run_pooled(std::vector<at::Tensor>* consumed,
                                     const std::vector<at::Tensor>& inputs, RunObserver* observer,
                                     OpaqueCalls* opaque) const;
  struct Impl;
  // One run in `frame`; with `consumed` (== &inputs), moves the inputs into the frame. Static:
  // the CUDA-graph replay holds it, and an Executor may move.
  static std::vector<at::Tensor> run_frame(const Impl& impl, Frame& frame,
                                           std::vector<at::Tensor>* consumed,
                                           const std::vector<at::Tensor>& inputs,
                                           RunObserver* observer, OpaqueCalls* opaque = nullptr);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ca
