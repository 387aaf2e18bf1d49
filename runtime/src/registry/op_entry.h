// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The registry's entries as the runtime uses them: the functional form itself and its schema.

#include <ATen/core/jit_type.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ca/op_registry.h"
#include "torch_compat.h"

namespace ca::detail {

/// `variable_list(const variable_list& grads, const ivalue_list& packed_args)`.
using FunctionalFn = torch::autograd::functional_apply_t;

/// One resolved op.
struct OpEntry {
  std::string name;                 ///< e.g. "MulBackward0"
  FunctionalFn fn;                  ///< the node's `<Op>_apply_functional_ivalue`
  std::vector<at::TypePtr> schema;  ///< type of each packed arg, in order
  bool is_custom_function = false;  ///< a `torch::autograd::Function<T>` registered by a trainer
  /// Length of the `needs_input_grad` flags the function unpacks first (into a fixed-size array,
  /// without a bounds check), or -1 when unknown. Checked when a graph is loaded.
  int64_t needs_input_grad_count = -1;
};

/// Whether a call runs torch's own generated functional form (null: an aten call; custom
/// functions run user code). Such a call reads its packed args and writes none, so equal
/// constants may be shared across nodes and frames (load/shared_constants.h), and views among
/// its outputs need no tracking when they never leave the replay (exec/below_autograd.h).
inline bool is_builtin_functional(const OpEntry* op) {
  return op != nullptr && !op->is_custom_function;
}

/// The entry for `name` in the global registry, or nullptr. Valid for the life of the process.
const OpEntry* find_op(const std::string& name);

/// Adds a custom function's entry; returns false, changing nothing, when `name` is registered.
/// Before the registry is first used the entry is queued, so static initialization
/// (CA_REGISTER_FUNCTION) never runs the harvest.
bool register_custom_op(OpEntry entry);

/// Entries the harvest found go to the registry through this, once.
struct RegistryAccess {
  static const OpEntry* find(const OpRegistry& registry, const std::string& name);
  static bool add(const OpRegistry& registry, OpEntry entry);
};

}  // namespace ca::detail
