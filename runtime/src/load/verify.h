// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The load pipeline's first stage, and the only one that refuses a graph: after verify(), the
// graph's structure, every op, every packed arg and every rule that protects an op at load
// (guards/) hold, so the stages after it (plan/) only assert their own invariants.

#include <cstdint>
#include <vector>

#include "ca/executor.h"
#include "ca/graph.h"
#include "load/op_binding.h"
#include "load/schema_compat.h"

namespace ca::detail {

/// A graph that verify() accepted, with what verifying it bound: made only by verify().
class VerifiedGraph {
 public:
  Graph graph;
  std::vector<BoundNode> bound;  ///< one per node of `graph` (bind_ops)
  SchemaReport schemas;          ///< the graph's op schemas against the registry
  int64_t max_tensor_elements = 0;

 private:
  VerifiedGraph() = default;
  friend VerifiedGraph verify(Graph graph, const ExecutorOptions& options);
};

/// Checks `graph` in the order that names the deepest cause first: its structure
/// (validate_graph), its op schemas against this torch's, each node's op and packed args
/// (bind_ops, with the load-time op rules), then what the nodes declare against each other
/// (outputs an op never computes, output counts). Throws FormatError, OpNotFoundError or
/// VersionError (unless `options.allow_version_mismatch`) naming the node and the expectation;
/// saved sizes of more than `options.max_tensor_elements` elements are refused, and opaque nodes
/// unless `options.opaque_nodes`.
VerifiedGraph verify(Graph graph, const ExecutorOptions& options);

}  // namespace ca::detail
