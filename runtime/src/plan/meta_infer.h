// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Load-time inference of every value's metadata (dtype, shape; strided, on the graph's device):
// graph inputs give theirs, functional ops are run once on meta-device tensors, and the
// builtins propagate. Its purpose is to prove validate_outputs nodes no-ops at load, and to say
// which ops return only fresh tensors (none a view or alias of what they read).

#include <vector>

#include "ca/graph.h"
#include "load/op_binding.h"

namespace ca::detail {

/// What a functional op's outputs share with the tensors it read (grads and saved tensors), as
/// its run on meta tensors showed: what decides whether its view tracking can be seen.
enum class OutputSharing : uint8_t {
  kUnknown,        ///< not run on meta tensors (custom function, unknown inputs, failure, budget)
  kFresh,          ///< new tensors only, none a view of another, none written in place
  kPassesReads,    ///< also some tensor it read, passed on unchanged (a grad returned as is)
  kViewsOrWrites,  ///< some output is a view or alias of a tensor it read or of another output,
                   ///< or the op wrote in place into an output or a read (versions moved)
};

/// What load-time inference found.
struct MetaInference {
  std::vector<bool> validate_is_noop;  ///< by node index; true only for proven validate_outputs
  std::vector<OutputSharing> output_sharing;  ///< by node index
  size_t meta_calls = 0;                      ///< ops actually run on meta tensors
  size_t memo_hits = 0;                       ///< inferences answered by an earlier identical call
  size_t unknown = 0;                         ///< functional nodes whose outputs stayed unknown
};

/// Infers metadata through `graph`. Op failures on meta tensors, custom functions, symbolic
/// sizes, an exhausted call budget (512 distinct meta calls) and an op that returns another
/// number of outputs than its node declares make values unknown: inference never refuses.
MetaInference infer_metas(const Graph& graph, const std::vector<BoundNode>& bound);

}  // namespace ca::detail
