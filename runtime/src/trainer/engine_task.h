// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// A replay that calls live nodes runs as the one node of an eager engine task, so that those
// nodes and their hooks find what the engine gives every node it runs: Engine::queue_callback
// (its callbacks run once the replay is done, as after an eager backward), the task's exec_info
// (a pruned grad()'s task_should_compute_output, a custom function's needs_input_grad), the
// reentrant depth of a backward called inside, and warnings held to the end.

#include <functional>

#include "torch_compat.h"

namespace ca::detail {

/// Runs `replay` inside the eager engine's execute(), as the only node its GraphTask runs.
/// `root` is the backward's GraphRoot; with `outputs` (grad()'s or backward(inputs=)'s edges)
/// the task's exec_info is eager's, which costs the engine's walk of the graph; without, the task
/// holds the one node. Nothing of the graph runs but `replay`. What `replay` throws is rethrown as
/// it was thrown; a final callback's exception comes after the replay has completed.
void run_in_engine_task(const std::function<void()>& replay, const compat::NodePtr& root,
                        const torch::autograd::edge_list& outputs, bool accumulate_grad,
                        bool keep_graph);

}  // namespace ca::detail
