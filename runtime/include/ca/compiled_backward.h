// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file
/// The trainer API: ca-replay as the backward engine of a C++ training loop. The first backward
/// of a graph captures it and prepares an executor; later backwards of a graph with the same
/// constants only walk the new autograd graph (upstream's compiled_args pass), build a cache key,
/// bind the step's tensors to the cached executor and replay.

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "ca/executor.h"

namespace ca {

namespace detail {
struct BackwardAccess;
}  // namespace detail

struct DataParallelOptions;  // ca/distributed.h

/// Per-call options, as `torch::autograd::backward` takes them.
struct BackwardOptions {
  /// Keep the autograd graph's saved state after the call (else it is freed, as eager does).
  bool retain_graph = false;
  /// Build a graph of the backward itself: not replayable, such calls run eager backward.
  bool create_graph = false;
};

/// Per-call options of grad(), as `torch::autograd::grad` takes them.
struct GradOptions : BackwardOptions {
  /// An input no gradient reaches gives an undefined tensor instead of an error.
  bool allow_unused = false;
};

/// Options fixed for a CompiledBackward's life.
struct CompiledBackwardOptions {
  /// Prepared graphs kept, least recently used dropped first (at least 1).
  size_t cache_size = 8;
  /// Throw CaptureError for graphs capture cannot take (hooks, Python nodes, create_graph)
  /// instead of running eager backward for that call.
  bool strict = false;
  /// How each captured graph is prepared. With `cuda_graph` (and a CUDA `device`), each cached
  /// graph keeps its own CUDA graph and static buffers (see ExecutorOptions).
  ExecutorOptions executor;
  /// Average the parameters' gradients over a process group after each backward, all-reduced
  /// while the replay runs (ca/distributed.h's data_parallel()); null: a single process.
  std::shared_ptr<const DataParallelOptions> data_parallel;
};

/// What the cache did so far.
struct CompiledBackwardStats {
  size_t hits = 0;  ///< calls replayed on a cached graph
  /// Of the hits, those matched by checking the live graph against the last graph used
  /// directly, without walking it through upstream's compiled_args first (the steady state).
  size_t checked_hits = 0;
  size_t misses = 0;           ///< calls that captured a graph
  size_t eager_fallbacks = 0;  ///< calls run by eager backward instead
  /// Why the last miss missed: the first node or input where its graph differs from the closest
  /// cached one ("node 3 (MulBackward0): its saved constants or edges differ"), or "empty cache".
  std::string last_miss_reason;
  std::string last_fallback_reason;  ///< why the last fallback could not be captured
  size_t cached_graphs = 0;          ///< prepared graphs held now (at most the cache size)
  /// Autograd nodes that replays called as themselves, summed over replays: opaque nodes (a
  /// node with hooks, TorchScript's DifferentiableGraphBackward, a custom function compiled
  /// autograd cannot hold), run as the eager engine runs them while the rest of their graph
  /// replays.
  size_t opaque_calls = 0;
  /// The opaque node types of the last replayed graph that had any, each with why
  /// ("ReluBackward0 (it has tensor pre-hooks)").
  std::string last_opaque_nodes;
  /// With data_parallel: gradient buckets all-reduced, and of those, launched while the replay
  /// still ran (overlapped with it).
  size_t buckets_reduced = 0;
  size_t buckets_overlapped = 0;
};

/// Replays backward passes with cached graphs. Every constant a graph bakes in (node types and
/// edges, specialized sizes, dtypes, devices, requires_grad, Scalars and other saved attributes,
/// custom functions' saved_data, whether a leaf already has a .grad, the options) is part of the
/// cache key or a graph input, so a changed constant misses instead of replaying a stale value.
/// Thread-safe: backwards on several threads replay at once (prepared graphs are shared and
/// immutable; a capture on one thread does not stall replays on others), except that with
/// data_parallel the steps that average gradients take turns. Backwards on several threads may
/// write the .grad of the same leaves (each write holds the leaf's accumulator lock, as eager's
/// AccumulateGrad does); they must not run through the same graph nodes while one of them
/// captures (capture swaps a node's saved values while it records).
class CompiledBackward {
 public:
  explicit CompiledBackward(CompiledBackwardOptions options = {});
  ~CompiledBackward();
  CompiledBackward(const CompiledBackward&) = delete;
  CompiledBackward& operator=(const CompiledBackward&) = delete;

  /// `torch::autograd::backward(roots, grads, retain_graph, create_graph)`: gradients accumulate
  /// into the leaves' .grad exactly as eager does (`grads` defaults to ones for one-element
  /// roots), and non-leaf tensors with retain_grad() get theirs. Returns the .grad of every leaf
  /// it wrote, in the graph's order (empty when the call ran eagerly). Throws CaptureError for
  /// invalid roots, and in strict mode for graphs capture cannot take, and ca::Error from replay
  /// (ExecutionError naming the node).
  std::vector<at::Tensor> backward(const std::vector<at::Tensor>& roots,
                                   const std::vector<at::Tensor>& grads = {},
                                   BackwardOptions options = {});

  /// `torch::autograd::grad(outputs, inputs, grad_outputs, ...)`: the gradients of `outputs`
  /// with respect to `inputs` (leaf or not), one per input; no .grad is written and only the
  /// nodes leading to an input run. Throws CaptureError for an input that does not require grad
  /// or, without allow_unused, that no gradient reaches; otherwise as backward().
  std::vector<at::Tensor> grad(const std::vector<at::Tensor>& outputs,
                               const std::vector<at::Tensor>& inputs,
                               const std::vector<at::Tensor>& grad_outputs = {},
                               GradOptions options = {});

  /// Counters and the last miss's reason, as of now (each count exact with threads too).
  CompiledBackwardStats stats() const;
  /// Drops every cached graph (the counters stay).
  void clear();

 private:
  friend struct detail::BackwardAccess;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Routes every `backward()` of the process (`loss.backward()`, `torch::autograd::backward`)
/// through one process-wide CompiledBackward made with `options`: the first enable() installs
/// libtorch's default engine in a wrapper of ours (`set_default_engine_stub`, as Python's engine
/// is installed) that replays what it can and hands every other call, unchanged, to the engine it
/// wraps; a trainer adds one line and keeps its code. `torch::autograd::grad()` and
/// `backward(inputs=...)` replay too; create_graph runs eagerly (counted as a fallback). A
/// backward that cannot replay runs eagerly on its own thread and touches nothing process-wide,
/// so other threads' backwards are never disturbed. Backwards on several threads replay at once.
/// A backward() called from inside a step on the same thread (a replayed custom function's, a
/// reentrant one) runs eagerly and is not counted. Calling it again starts afresh. The wrapper
/// stays installed after disable(), which makes every later backward eager (a step already
/// running finishes on the CompiledBackward it started with) and is safe while other threads
/// run backwards.
void enable(CompiledBackwardOptions options = {});
/// Restores plain eager backward; the last stats stay readable through enabled_stats().
void disable();
/// The process-wide engine's stats (once disabled, those of the engine disable() dropped,
/// steps that were still running on it included).
CompiledBackwardStats enabled_stats();

/// enable() for a scope: disable() when it ends.
class EnableGuard {
 public:
  explicit EnableGuard(CompiledBackwardOptions options = {});
  ~EnableGuard();
  EnableGuard(const EnableGuard&) = delete;
  EnableGuard& operator=(const EnableGuard&) = delete;
};

}  // namespace ca
