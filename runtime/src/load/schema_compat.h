// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Compatibility by schema, not by version string: a graph captured with another torch loads when
// every functional op it uses has, in this runtime, the packed-args schema the graph recorded.

#include <cstddef>
#include <string>
#include <vector>

#include "ca/graph.h"

namespace ca::detail {

/// How a graph's recorded op schemas compare with this runtime's registry.
struct SchemaReport {
  std::string captured_torch;           ///< the graph's torch_version ("" when unrecorded)
  bool same_torch = false;              ///< captured with this runtime's torch release
  size_t ops_checked = 0;               ///< distinct built-in functional ops compared
  size_t custom_functions = 0;          ///< custom functions (their schema comes with each call)
  std::vector<std::string> mismatches;  ///< accepted only with allow_version_mismatch
};

/// Checks that every functional op of `graph` has a recorded schema (FormatError naming the first
/// node that lacks one) and that each built-in op's schema equals the registry's. Ops the registry
/// lacks are skipped: resolution reports them. Runs before the per-node type checks, so that a
/// graph from another torch is refused for its schemas, not for the first arg that differs.
/// Differences throw VersionError listing every op with both signatures ("graph uses
/// AddmmBackward0(bool[], Scalar, ...) but torch 2.14.1 has ..."), unless `allow_version_mismatch`,
/// which returns them in the report instead. A difference in a graph recorded by this very torch
/// release is a FormatError (the file is not what capture wrote).
SchemaReport check_op_schemas(const Graph& graph, bool allow_version_mismatch);

}  // namespace ca::detail
