// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The rules for aten nodes, whose op and whole boxed stack come from the file.
//  - Load: the op's schema decides. The stack must hold every argument (a boxed call gets no
//    defaults filled in), each of its type; the node declares one output per return; varargs
//    ops, ops that write into an argument (`Tensor(a!)`: a replay must never write into the
//    caller's tensors) and the ops that set a geometry without any bounds check
//    (`_reshape_alias` and its copy) are refused.
//  - Run, before the call: arguments typed `Tensor` (not `Tensor?`) are defined.
//  - Run, after the call: every tensor result that aliases an argument (a view: its sizes,
//    strides and offset may come from the file) lies inside its storage, before anyone reads it.

#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>
#include <ATen/core/stack.h>

#include <string>
#include <vector>

#include "ca/graph.h"

namespace ca::detail {

/// Load-time check of an aten node's op and args. Throws FormatError naming `at`, the arg and
/// the expectation.
void check_aten_node(const Node& node, const c10::FunctionSchema& schema,
                     const std::vector<c10::IValue>& args, const std::string& at);

/// Before the call: throws ExecutionError when a `Tensor` argument is undefined.
void check_aten_inputs(const c10::FunctionSchema& schema, const torch::jit::Stack& stack);

/// After the call: throws ExecutionError when a result that aliases an argument reads outside
/// its storage.
void check_aten_results(const c10::FunctionSchema& schema, const torch::jit::Stack& results);

}  // namespace ca::detail
