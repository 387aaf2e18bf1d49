// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The guard table: what protects each functional op from a crafted graph or batch, in one place.
// An op's guards are the length rules generated from the installed torch's derivatives.yaml
// (op_rules.h) and the hand-written rows below, side by side. Each hand-written row says what
// it protects (the unchecked read in torch), its phase and its rule:
//   - load: a length rule over packed args, checked once when the graph loads (FormatError);
//   - run: a check of what only a call knows (a grad's rank, a saved tensor's values), bound
//     at load to the node's arg positions and run before each call (ExecutionError).
// Rows name args by upstream's names; they are resolved to positions when a node binds.

#include <ATen/core/ivalue.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "ca/graph.h"
#include "guards/call_checks.h"
#include "guards/op_rules.h"

namespace ca::detail {

enum class GuardPhase : uint8_t { kLoad, kRun };

/// A length rule by upstream's arg names: ListRule `kind` over args[a], with args[b] for rules
/// between two args or the number `n` for rules with a count; `gate` as in ListRule.
struct NamedListRule {
  ListRule::Kind kind;
  const char* a;
  const char* b = nullptr;
  uint16_t n = 0;
  uint32_t gate = 1;
};

/// Binds a run-phase guard to one node's slots.
using RunGuardFactory = RunGuard (*)(const ArgSlots&);

/// One hand-written guard of one op.
struct GuardRow {
  const char* op;
  const char* protects;  ///< the read in torch that trusts what the rule checks
  std::variant<NamedListRule, RunGuardFactory> rule;

  GuardPhase phase() const {
    return std::holds_alternative<NamedListRule>(rule) ? GuardPhase::kLoad : GuardPhase::kRun;
  }
};

/// The hand-written rows, sorted by op (guard_rows.cpp).
const std::vector<GuardRow>& guard_rows();

/// Applies every guard of functional node `node` (its graph args `node_args`, converted to the
/// type-checked `args`) that this torch's
/// table has: checks the load-phase ones now, throwing FormatError naming `at`, the arg and the
/// expectation (saved sizes describe at most `max_elements` elements), and returns the
/// run-phase ones bound to the node. Ops the table does not know, or knows with another
/// packing, have none. Throws Error when a row names an arg the op does not pack (a table bug).
CallCheck bind_guards(const Node& node, const std::string& op, const ArgRefs& node_args,
                      const std::vector<c10::IValue>& args, const std::string& at,
                      int64_t max_elements);

}  // namespace ca::detail
