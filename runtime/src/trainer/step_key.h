#pragma once
// The cache key of one backward step: everything a captured graph bakes in as a constant. Built
// from the step's walk (upstream's per-node cache keys) plus what those keys leave to dynamo's
// guards upstream: tensor metadata, specialized sizes and lifted scalars' values.

#include <string>
#include <vector>

#include "capture/graph_walk.h"

namespace ca::detail {

/// A step's key, kept in parts so that a miss can say where two steps differ.
struct StepKey {
  std::vector<std::string> node_keys;    ///< per node, in order: type + specialized bytes
  std::vector<std::string> node_names;   ///< per node: its name(), for messages
  std::vector<std::string> input_metas;  ///< per tensor input: dtype, device, sizes, ...
  std::vector<int64_t> sizes;            ///< specialized size inputs
  std::vector<std::string> scalars;      ///< lifted scalars (custom functions' saved_data ...)
  std::string options;                   ///< the backward options that matter

  /// A hash of every part, for lookups; equal keys have equal hashes.
  size_t hash() const;
  bool operator==(const StepKey& o) const {
    return options == o.options && node_keys == o.node_keys && input_metas == o.input_metas &&
           sizes == o.sizes && scalars == o.scalars;
  }
};

/// The key of a walk made with keys (its node keys are moved out); `options` are the
/// BackwardOptions as text.
StepKey step_key(GraphWalk& walk, std::string options);

/// Where `key` first differs from `cached`, in words.
std::string describe_difference(const StepKey& key, const StepKey& cached);

/// How many leading parts of `key` equal `cached`'s (to find the closest cached graph).
size_t common_prefix(const StepKey& key, const StepKey& cached);

}  // namespace ca::detail
