// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file
/// Structural validation of a ca::Graph: the one owner of the graph's shape rules.

#include "ca/graph.h"

namespace ca {

/// Checks every structural rule of a graph: value ids in range and defined exactly once before
/// use, arity of each node kind, arg shapes of the built-in kinds, recorded op schemas. Runs once
/// per load, inside the executor's load pipeline. Throws FormatError naming the first violation,
/// e.g. "nodes[17].inputs[2]: value id 93 out of range [0, 80)".
void validate_graph(const Graph& graph);

}  // namespace ca
