// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Capture from a walk already made: the trainer API walks each step's graph for its cache key and,
// on a miss, captures from that same walk instead of walking again.

#include "ca/capture.h"
#include "capture/graph_walk.h"
#include "capture/recorder.h"

namespace ca::detail {

/// Pass 2 over `walk` (apply_with_saved on proxies, every compiler call recorded): the graph and
/// its real inputs. Releases nothing: a caller that refuses the result still has the autograd
/// graph, and frees its saved state itself (backward() without retain_graph) once it keeps it.
/// Throws CaptureError naming the node. Whatever it throws, the autograd graph is left as it
/// found it (every saved value swapped for a proxy is back), so the caller may run eager
/// backward on it. `observer` (tests) sees every point where capture can fail.
CaptureResult capture_walk(GraphWalk& walk, const CaptureObserver& observer = {});

}  // namespace ca::detail
