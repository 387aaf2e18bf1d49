// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Verified FlatBuffers graph -> ca::Graph, with every enum range-checked.

#include <cstddef>

#include "ca/graph.h"
#include "ca_graph_generated.h"

namespace ca::detail {

/// Converts a graph that flatbuffers::Verifier accepted. `budget` bounds the work: every table
/// costs 4 units, every vector element 4 or 8 and every string its length. A buffer written by
/// graph_to_bytes never needs more than its own size; one whose offsets share data (a DAG
/// that would expand into a huge IR) runs out and is refused. Throws FormatError naming the
/// field, e.g. "nodes[3].args[0].kind: 99 out of range [0, 15)".
Graph read_graph(const fb::Graph& root, size_t budget);

}  // namespace ca::detail
