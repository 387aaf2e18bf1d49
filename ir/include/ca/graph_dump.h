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

/// Short text of one packed argument, as used by dump_graph.
std::string format_arg(const Arg& arg);

}  // namespace ca
