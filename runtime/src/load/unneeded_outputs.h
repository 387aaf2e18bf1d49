// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Load-time rule: a built-in functional op never computes an output whose needs_input_grad flag
// is off (it returns an undefined tensor there), and the engine only clears a flag when nothing
// downstream runs. So in a real graph nothing reads such an output; a graph that does (a flipped
// flag in a forged file) would replay with a gradient silently missing.

#include <vector>

#include "ca/graph.h"
#include "load/op_binding.h"

namespace ca::detail {

/// Throws FormatError naming the node, the output and the flag when a functional node's output
/// whose needs_input_grad flag is off is used: read by a node other than the validate_outputs
/// that passes it through unused, or returned by the graph. Applies where
/// flags and outputs correspond one to one (as many flags as outputs: no tensor list with other
/// than one element); `bound` is bind_ops' result for `graph`.
void check_unneeded_outputs(const Graph& graph, const std::vector<BoundNode>& bound);

}  // namespace ca::detail
