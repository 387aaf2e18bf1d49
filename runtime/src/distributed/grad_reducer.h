// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// One backward's gradient averaging over a process group: buckets launched in a fixed order as
// soon as their gradients are written (or all after the backward), then awaited and written
// back as averages. Owned by a CompiledBackward; one step at a time.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ca/distributed.h"
#include "ca/executor.h"
#include "ca/graph.h"
#include "distributed/grad_buckets.h"

namespace ca::detail {

/// Where a graph writes a `.grad`: the graph input and the last node that writes it.
struct GradWrite {
  size_t input = 0;
  size_t node = 0;
};

/// Where a graph's `.grad`s are written: by its accumulate_grad nodes, and by those of its opaque
/// nodes that are live AccumulateGrads (which leaf each writes is known only per step).
struct GradWrites {
  std::vector<GradWrite> captured;
  std::vector<size_t> opaque;  ///< each opaque node's index, in node order
};

/// The .grad writes of `executor`'s graph.
GradWrites grad_writes(const Executor& executor);

class GradReducer {
 public:
  using WeakImpl = c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>;

  explicit GradReducer(std::shared_ptr<const DataParallelOptions> options);
  ~GradReducer();

  /// Starts a step: notes every parameter's .grad, so that a launch can tell which ones this
  /// step wrote. No launch is planned: finish() launches every bucket.
  void begin();
  /// For a replay whose graph inputs are `inputs` and whose .grad writes are `writes`: plans
  /// each bucket's launch after the node that writes its last gradient (never before an earlier
  /// bucket's), and launches the buckets no node writes. `live_leaves[k]` is the leaf the k-th
  /// opaque node writes (null: none). Call after begin().
  void plan_launches(const std::vector<at::Tensor>& inputs, const GradWrites& writes,
                     const std::vector<const at::Tensor*>& live_leaves);
  /// The observer to replay with: it launches the planned buckets as their nodes end.
  RunObserver* observer();
  /// Launches what is left, waits for every bucket and writes each average into `.grad`.
  /// Throws CommunicationError naming the rank and the bucket for a failed or timed-out
  /// collective, or for a sparse gradient.
  void finish();
  /// Drops a step that failed before finish(): no collective is awaited.
  void abandon();
  /// Buckets all-reduced so far, and of those, launched before the backward had ended.
  size_t launched() const { return launched_; }
  size_t launched_early() const { return launched_early_; }

 private:
  void launch_through(int64_t node);
  void launch(size_t bucket);
  std::string describe(size_t bucket) const;

  struct Observer : RunObserver {
    GradReducer* reducer = nullptr;
    void node_end(size_t node) override;
  };

  std::shared_ptr<const DataParallelOptions> options_;
  int rank_ = 0;
  int world_ = 1;
  std::vector<GradBucket> buckets_;
  std::unordered_map<const c10::TensorImpl*, size_t> param_index_;  ///< parameter by identity
  std::vector<int64_t> launch_after_;  ///< per bucket: the node it waits for (-1: none)
  size_t next_ = 0;                    ///< the next bucket to launch
  bool finishing_ = false;             ///< launches now come after the backward
  size_t launched_ = 0;
  size_t launched_early_ = 0;
  std::vector<c10::intrusive_ptr<c10d::Work>> works_;
  /// Each parameter's .grad at begin(): weak, so the engine's in-place accumulation (which
  /// needs the only strong reference) is unchanged, yet the address cannot be reused.
  std::vector<std::optional<WeakImpl>> grad_before_;
  std::vector<uint32_t> version_before_;
  std::exception_ptr launch_error_;  ///< from a launch inside the replay (observers never throw)
  Observer observer_;
};

}  // namespace ca::detail
