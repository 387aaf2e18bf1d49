// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Capture from a walk already made: the trainer API walks each step's graph for its cache key and,
// on a miss, captures from that same walk instead of walking again.

#include "ca/capture.h"
#include "capture/graph_walk.h"

namespace ca::detail {

/// Pass 2 over `walk` (apply_with_saved on proxies, every compiler call recorded): the graph and
/// its real inputs. `release_variables` frees the autograd graph's saved state afterwards, as
/// backward() without retain_graph does. Throws CaptureError naming the node.
CaptureResult capture_walk(GraphWalk& walk, bool release_variables);

}  // namespace ca::detail
