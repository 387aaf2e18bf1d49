// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The steady-state check of a step against one cached graph, without the full walk and key.
// Recorded once from the walk a graph was captured from, it holds every fact the step key holds,
// in a form a live graph can be compared with directly: the node types by position, every edge
// as (target position, input_nr), the dependency counts, what each node's compiled_args collects
// (read by NodeReader), which tensor each collection was, and the inputs' metadata. A step
// matches when all are equal and the eager engine's ready-queue order, run on the live nodes'
// sequence numbers, is the recorded order; its inputs are then the captured graph's inputs.

#include <cstdint>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

#include "capture/graph_walk.h"
#include "trainer/node_reader.h"
#include "trainer/step_key.h"

namespace ca::detail {

class StepCheck {
 public:
  /// The check of the graph `walk` was captured from, whose replay inputs are `inputs` (the
  /// walk's own, before they are moved) and whose key is `key`; null where the graph cannot be
  /// checked this way (a node type without a reader, a retain_grad hook on a captured node, an
  /// opaque node only compiled_args can tell is one (mark_dirty), a pruned grad()/inputs= walk, a
  /// saved variable with hooks) or where the readers do not find what the
  /// walk found (the same inputs, with the key's metadata): such a graph takes the full walk every
  /// step.
  static std::unique_ptr<const StepCheck> record(const GraphWalk& walk,
                                                 const std::vector<at::Tensor>& inputs,
                                                 const StepKey& key);

  /// A step whose graph matched: its nodes in execution order and the replay's inputs.
  struct Step {
    std::vector<NodePtr> order;
    std::vector<at::Tensor> inputs;
  };
  /// Whether the graph under `root` is the recorded one in every fact the cache key holds;
  /// fills `step` when it is (and leaves it empty when not). Never throws for a graph that
  /// differs: a saved variable that cannot be unpacked (modified in place, already freed) or a
  /// tensor whose metadata cannot be read is a mismatch, and the full walk then reports it.
  bool matches(const NodePtr& root, Step& step) const;

  size_t nodes() const { return types_.size(); }
  /// The positions of the opaque nodes in a matched step's order (GraphWalk::opaque's).
  const std::vector<uint32_t>& opaque() const { return opaque_; }

 private:
  struct EdgeRef {
    int32_t target;  ///< position of the edge's node; -1 for an invalid edge
    uint32_t input_nr;
  };
  bool match(const NodePtr& root, Step& step) const;
  bool read(const std::vector<NodePtr>& live, StepTensors& tensors, ReadBytes& bytes) const;

  /// How a position is checked: by its reader, or as an opaque node (type, edges, input count,
  /// and for one opaque for its hooks, that it still has some).
  enum class Kind : uint8_t { kCaptured, kOpaqueByType, kOpaqueWhileHooked };
  std::vector<Kind> kinds_;
  std::vector<uint32_t> opaque_;
  std::vector<const std::type_info*> types_;
  std::vector<NodeReadFn> readers_;
  std::vector<uint32_t> edge_ends_;  ///< per position: where its edges end in edges_
  std::vector<EdgeRef> edges_;
  std::vector<uint32_t> deps_;  ///< per position: how many edges lead to it
  std::vector<uint32_t> tensor_ids_;
  std::string bytes_;      ///< what the readers wrote, then the inputs' metadata
  size_t read_bytes_ = 0;  ///< where the inputs' metadata begins in bytes_
};

}  // namespace ca::detail
