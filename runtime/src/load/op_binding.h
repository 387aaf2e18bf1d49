// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Op binding: the load step that resolves every functional and aten op, converts packed Args to
// IValues once and type-checks them against the op's schema. One BoundNode per graph node; the
// execution plan is built on top of them.

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/autograd/input_metadata.h>

#include <functional>
#include <optional>
#include <variant>
#include <vector>

#include "ca/graph.h"
#include "guards/call_checks.h"
#include "load/schema_compat.h"
#include "registry/op_entry.h"

namespace ca::detail {

using MetadataList = std::vector<std::optional<torch::autograd::InputMetadata>>;

/// kFunctional / kAten: the op and its args as IValues; tensor and SymInt references are
/// placeholders (undefined tensor, 0) that the plan fills per run.
struct OpCall {
  const OpEntry* op = nullptr;                      ///< kFunctional
  std::unique_ptr<const c10::OperatorHandle> aten;  ///< kAten (boxed: most nodes are not)
  std::vector<c10::IValue> args;
  CallCheck check;  ///< kFunctional: what each call checks first (call_checks.h)
};
/// kCopySlicesPrologue: the base and view geometry.
struct CopySlicesGeometry {
  at::TensorGeometry base, view;
};
/// Boxed where a graph keeps one per node (bound nodes, plan steps): rare, and 144 bytes.
using BoxedGeometry = std::unique_ptr<const CopySlicesGeometry>;
/// kCopySlicesEpilogue.
struct CopySlicesFlags {
  std::vector<bool> needs_input_grad;
};
/// kAccumulateGrad.
struct AccumulateGradFlags {
  bool has_post_hooks = false;
};

/// What binding found for one node: its kind's payload (monostate for kAccumulate).
using BoundNode = std::variant<std::monostate, OpCall, MetadataList, BoxedGeometry, CopySlicesFlags,
                               AccumulateGradFlags>;

/// Binds every node of `graph` (already structurally validated): first the recorded op schemas
/// against the registry (check_op_schemas: VersionError naming each op that differs, unless
/// `allow_version_mismatch`), then each node. Throws FormatError naming `nodes[i].args[j]` for
/// args that do not fit the op's schema, and one OpNotFoundError that lists every op name that
/// does not resolve. `schemas` receives the schema comparison. Saved sizes that describe a
/// tensor of more than `max_tensor_elements` elements are refused (ExecutorOptions' limit).
std::vector<BoundNode> bind_ops(const Graph& graph, bool allow_version_mismatch,
                                int64_t max_tensor_elements, SchemaReport* schemas);

/// Reads a symbolic size's current value on each run.
using SizeOf = std::function<int64_t(ValueId)>;
/// A validate_outputs node's metadata whose sizes are symbolic (a graph exported with dynamic
/// shapes), built from the current sizes. The arg's shape was checked by bind_ops.
MetadataList rebind_metadata(const ArgRef& metadata, const SizeOf& size_of);
/// A copy_slices_prologue node's geometry with symbolic sizes, built from the current sizes.
CopySlicesGeometry rebind_geometry(const ArgRef& base, const ArgRef& view, const SizeOf& size_of);

}  // namespace ca::detail
