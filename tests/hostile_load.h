// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The hostile-graph suites' way in: a graph goes through bytes, as a file would, then the
// executor's whole load pipeline.

#include <cstdint>
#include <string>
#include <vector>

#include "ca/error.h"
#include "ca/executor.h"
#include "ca/graph_io.h"
#include "test_util.h"

namespace ca::test {

inline Executor load(const Graph& g) {
  const std::vector<uint8_t> bytes = graph_to_bytes(g);
  return Executor(graph_from_bytes(bytes.data(), bytes.size()));
}

/// The FormatError text loading `g` gives (the test fails if it loads).
inline std::string load_error(const Graph& g) {
  return error_of<FormatError>([&] { load(g); }, "loading the graph");
}

}  // namespace ca::test
