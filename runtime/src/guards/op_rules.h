// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Per-op length rules of the generated functional forms, which index their grads and some saved
// lists without checking: how many grads each op reads, and which packed lists must have which
// lengths. The table is generated at build time from the installed torch's own codegen inputs
// (tools/gen_op_rules.py); hand-written rules sit beside them in the guard table
// (guard_table.h). The check runs at load, after the packed args were type-checked.

#include <ATen/core/ivalue.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ca/graph.h"

namespace ca::detail {

/// One length rule over a node's packed args (positions as upstream packs them).
struct ListRule {
  enum Kind : uint8_t {
    kSameLength,       ///< args[a] and args[b] (a tensor's sizes and strides) have one length
    kLength,           ///< args[a] has exactly b elements
    kMinLength,        ///< args[a] has at least b elements (the helper reads sizes[n - b])
    kNotShorterThan,   ///< args[a] has at least as many elements as args[b]
    kPositive,         ///< args[a] is an int > 0 (the helper divides by it)
    kGeometry,         ///< args[a], a packed TensorGeometry, has one stride per size
    kTensorSizes,      ///< args[a] (None, or a list of sizes) describes a tensor within the limit
    kTensorSizesList,  ///< args[a] is a list of such sizes (a tensor list's shapes)
    kTensorSize,       ///< args[a], one size of a saved tensor, is in [0, the limit]
    kNonEmpty,         ///< args[a] has at least one element (the helper indexes it by a dim)
    kCoversGrads,      ///< args[a] has at least one element per grad
    kLengthIsArg,      ///< args[a] has args[b] elements (a tensor list's per-element saved lists)
    kAtMostOutputs,    ///< args[a], a tensor list's length, is in [0, the node's outputs]
    kCatShapes,  ///< args[a] (shapes) of one rank r >= 1, legacy [0] aside; args[b] in [-r, r)
  };
  Kind kind;
  uint16_t a;
  uint16_t b;
  uint32_t gate;     ///< applies when one of these needs_input_grad flags is set (its formula runs)
  const char* name;  ///< upstream's name of args[a], for messages
};

/// What one generated op reads.
struct OpRules {
  const char* op;
  uint16_t min_grads;    ///< grads the functional form indexes (grads[min_grads - 1])
  uint16_t packed_args;  ///< packed-arg count the rules' positions assume
  std::vector<ListRule> rules;
  std::vector<const char*> names;  ///< upstream's name of each packed arg, in packing order
};

/// The generated table, sorted by op name (build/runtime/generated/generated_op_rules.cpp).
const std::vector<OpRules>& generated_op_rules();

/// The rules of `op`, or nullptr for ops the table does not know (custom functions, ops whose
/// helpers take the whole grads list without a rule).
const OpRules* find_op_rules(const std::string& op);

/// Checks a functional node's grads count and packed lists against its op's generated rules
/// (`rules` made for this packing: rules.packed_args == args.size()); saved sizes of forward
/// tensors must describe at most `max_elements` elements (ops allocate from them). Throws
/// FormatError naming `at`, the arg and the expectation. `args` are already type-checked.
void check_op_rules(const Node& node, const std::vector<c10::IValue>& args, const OpRules& rules,
                    const std::string& at, int64_t max_elements);

/// Checks one rule (a hand-written one, its positions resolved by name) as check_op_rules does.
void check_list_rule(const ListRule& rule, const Node& node, const std::vector<c10::IValue>& args,
                     const std::string& at, int64_t max_elements);

}  // namespace ca::detail
