// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The cache key of one backward step: everything a captured graph bakes in as a constant. Built
// from the step's walk (upstream's per-node cache keys) plus what those keys leave to dynamo's
// guards upstream: tensor metadata, specialized sizes and lifted scalars' values.

#include <string>
#include <typeinfo>
#include <vector>

#include "capture/graph_walk.h"

namespace ca::detail {

/// A step's key: its parts' bytes one after another in one buffer (a step allocates a handful of
/// buffers, not one per node), with where each part ends, so that a miss can say where two steps
/// differ.
struct StepKey {
  std::string options;  ///< the backward options that matter, and the tapped gradients
  std::string bytes;    ///< node keys, then input metas, then sizes, then scalars
  /// End offsets in `bytes` of each node key, input meta, specialized size and lifted scalar.
  std::vector<uint32_t> node_ends, input_ends, size_ends, scalar_ends;
  /// Per node: its type (the bytes hold its address too), for messages.
  std::vector<const std::type_info*> node_types;

  /// A hash of every part, for lookups; equal keys have equal hashes.
  size_t hash() const;
  bool operator==(const StepKey& o) const {
    // node_types need no comparison: each node key in `bytes` begins with its type's address.
    return options == o.options && bytes == o.bytes && node_ends == o.node_ends &&
           input_ends == o.input_ends && size_ends == o.size_ends && scalar_ends == o.scalar_ends;
  }
};

/// The key of a walk made with keys (its node keys are moved out); `options` are the
/// BackwardOptions as text.
StepKey step_key(GraphWalk& walk, std::string options);

/// Appends to `out` what the captured graph bakes in of each of `inputs` (dtype, device, layout,
/// sizes, strides, requires_grad, leaf and .grad presence), as the key holds it.
void append_tensor_metas(const std::vector<at::Tensor>& inputs, std::string& out);

/// Where `key` first differs from `cached`, in words.
std::string describe_difference(const StepKey& key, const StepKey& cached);

/// How many leading parts of `key` equal `cached`'s (to find the closest cached graph).
size_t common_prefix(const StepKey& key, const StepKey& cached);

}  // namespace ca::detail
