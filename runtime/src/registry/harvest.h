// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Harvesting: obtain each built-in node's `<Op>_apply_functional_ivalue` (not exported from
// libtorch) by driving a node through compiled_args + apply_with_saved under our own
// PyCompilerInterface, which records what `bind_function` receives.

#include <functional>
#include <string>
#include <vector>

#include "registry/op_entry.h"
#include "torch_compat.h"

namespace ca::detail {

/// Makes a node ready to be driven, plus the grads to hand its apply_with_saved.
struct NodeSample {
  compat::NodePtr node;
  torch::autograd::variable_list grads;
};

/// A node type to harvest: its name and how to build a sample of it.
struct NodeFactory {
  const char* name;
  NodeSample (*make)();
};

/// Every `struct ...Backward...` of the installed Functions.h (generated at build time).
const std::vector<NodeFactory>& generated_node_factories();
/// The non-generated nodes that bind a functional form (CopyBackwards, AccumulateGrad).
const std::vector<NodeFactory>& extra_node_factories();

/// Harvests every factory; entries go to `add`, failures to the report.
HarvestReport harvest_all(const std::function<void(OpEntry)>& add);

}  // namespace ca::detail
