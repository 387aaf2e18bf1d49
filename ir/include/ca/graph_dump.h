// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file
/// A ca::Graph as readable text, for `replay --dump`, logs and test failures.

#include <string>

#include "ca/graph.h"

namespace ca {

/// A readable text form: a header, one line per input, one line per node
/// ("  12 functional MulBackward0 (%3, %7) -> (%12, %13) [bools(1,1), t%2, Float]"). Safe on
/// graphs that were never validated: out-of-range ids print as they are.
std::string dump_graph(const Graph& graph);

/// What a graph input holds, as dump_graph prints it after its name: "Float[32, 10] cpu
/// requires_grad", "int = 8" or "float = 0.5" (-1 is a dynamic size). Safe on unvalidated input.
std::string format_input(const GraphInput& input);

/// Short text of one packed argument, as used by dump_graph.
std::string format_arg(const ArgRef& arg);
std::string format_arg(const Arg& arg);

}  // namespace ca
