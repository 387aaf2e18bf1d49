#pragma once
// A graph made ready to run: everything resolved before the first step, so the replay loop
// does no lookups and no bounds checks on serialized data.

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/autograd/input_metadata.h>

#include <optional>
#include <vector>

#include "ca/graph.h"
#include "registry/op_entry.h"

namespace ca::detail {

/// Where a tensor value goes into a prepared arg list on each run.
struct TensorSlot {
  uint32_t arg;  ///< index into PreparedNode::args
  int32_t item;  ///< -1: the arg itself; else the index in the arg's list
  ValueId value;
};

struct PreparedNode {
  NodeKind kind = NodeKind::kFunctional;
  const OpEntry* op = nullptr;              ///< kFunctional
  std::optional<c10::OperatorHandle> aten;  ///< kAten
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  std::vector<c10::IValue> args;  ///< ready, tensors filled per run from `slots`
  std::vector<TensorSlot> slots;
  std::vector<uint32_t> rebuilt_args;  ///< args with refs nested deeper: rebuilt per run
  std::vector<std::optional<torch::autograd::InputMetadata>> metadata;  ///< kValidateOutputs
  at::TensorGeometry base, view;                                        ///< kCopySlicesPrologue
  std::vector<bool> needs_input_grad;                                   ///< kCopySlicesEpilogue
  bool has_post_hooks = false;                                          ///< kAccumulateGrad
  std::vector<ValueId> frees;  ///< values dead once this node ran
};

struct PreparedGraph {
  Graph graph;
  std::vector<PreparedNode> nodes;
  std::vector<ValueId> input_frees;  ///< inputs no node reads
  std::vector<size_t> grad_targets;  ///< graph inputs that accumulate_grad writes
};

/// Resolves and converts `graph`. Throws FormatError / OpNotFoundError (all missing ops named) /
/// VersionError (op schemas that differ from the graph's, unless `allow_version_mismatch`).
PreparedGraph prepare(Graph graph, bool allow_version_mismatch);

/// Runs one prepared node (`node` is its IR form) on `values`, indexed by value id.
void run_node(PreparedNode& prepared, const Node& node, std::vector<at::Tensor>& values);

}  // namespace ca::detail
