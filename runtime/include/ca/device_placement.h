// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file
/// Where a graph's inputs live when it replays on a given device: a pure function of the graph,
/// computed once at load (ExecutorOptions::device), shown by `replay --verify --device`.
///
/// The graph's *home* device is the one its tensor inputs were recorded on (CPU 0-dim tensors
/// aside). Replaying on another device retargets the graph: every device it records that equals
/// the home (inputs, validate_outputs metadata, tensor options in packed args) becomes the
/// target, and inputs are moved there at bind.
///
/// CPU scalars (tensor inputs recorded as CPU 0-dim tensors, e.g. DivBackward0's `other`) follow
/// upstream's rule (`move_graph_nodes_to_cuda` in torch/_dynamo/compiled_autograd.py): only
/// when the graph has CUDA inputs, a CPU scalar moves to the CUDA device iff every node that
/// reads it is a built-in functional op, an aten/prims op, or one of the runtime's own steps;
/// a custom C++ function (and, in a graph recorded on CUDA, an accumulate_grad into that very
/// scalar, a CPU parameter) keeps it on CPU. Moving them lets a whole backward run as one
/// CUDA graph.

#include <c10/core/Device.h>

#include <cstddef>
#include <string>
#include <vector>

#include "ca/graph.h"

namespace ca {

/// Where one graph input is bound.
struct InputPlacement {
  c10::Device device{c10::kCPU};  ///< where the input lives during a run
  bool cpu_scalar = false;        ///< a CPU 0-dim tensor input: the movement rule placed it
  bool moves = false;             ///< cpu_scalar only: the rule moves it to the target
  std::string reason;             ///< cpu_scalar only: why it moves or stays
};

/// The placement of a whole graph on one target device.
struct DevicePlacement {
  c10::Device target{c10::kCPU};       ///< the device the graph replays on
  c10::Device home{c10::kCPU};         ///< the device its tensor inputs were recorded on
  std::vector<InputPlacement> inputs;  ///< one per graph input (int/double inputs: CPU)
  size_t scalars_moved = 0;            ///< CPU scalars the rule moves to the target
  size_t scalars_kept = 0;             ///< CPU scalars that stay on CPU

  /// Indices of the CPU scalars that stay on CPU.
  std::vector<size_t> kept_scalars() const;
};

/// Places `graph` on `target`. Pure: reads only the graph (its nodes, inputs and recorded op
/// schemas). Throws InputError when the graph records non-scalar tensor inputs on more than one
/// device (it cannot be retargeted as a whole).
DevicePlacement place_graph(const Graph& graph, c10::Device target);

/// `graph` with its recorded devices rewritten as `placement` says: each device equal to the
/// home becomes the target, and each input's recorded device becomes its placed device.
Graph retarget_graph(Graph graph, const DevicePlacement& placement);

/// One line per CPU scalar: "input 3 (saved.2): moves to cuda:0: every user is built-in (1)".
std::string describe_scalars(const Graph& graph, const DevicePlacement& placement);

}  // namespace ca
