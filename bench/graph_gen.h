// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Synthetic graphs for the loader benchmarks: long chains of trivial nodes, built with the IR
// alone (no torch, no capture), valid under ca::validate_graph.

#include <cstddef>
#include <string>

#include "ca/graph.h"

namespace ca::bench {

/// What each generated node is.
enum class TrivialKind {
  kAccumulate,  ///< accumulate {prev, grad} -> {next}: no args, the smallest node there is
  kFunctional,  ///< NegBackward0(grads = {prev}, args = {needs_input_grad: List[bool]{true}})
};

/// Parses "accumulate" / "functional"; throws std::invalid_argument otherwise.
TrivialKind trivial_kind_from_name(const std::string& name);

/// A chain of `nodes` nodes of `kind` over one float tensor input of shape {1}; the graph returns
/// the last node's output. Stamped with this runtime's torch version, so it loads without flags.
Graph trivial_chain(size_t nodes, TrivialKind kind);

}  // namespace ca::bench
