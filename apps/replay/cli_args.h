// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Command-line parsing for `replay`: every flag it knows, with its help text.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ca/executor.h"
#include "ca/graph_io.h"

namespace ca::cli {

/// What the user asked for.
struct Options {
  std::string graph;                    // --graph FILE
  std::string inputs;                   // --inputs FILE
  std::string out;                      // --out FILE
  std::string check;                    // --check FILE
  std::string verify;                   // --verify FILE
  std::string dump;                     // --dump FILE
  std::string dot;                      // --dot FILE
  std::string encode;                   // --encode FILE|-
  std::string trace;                    // --trace FILE
  double rtol = 1e-6;                   // --rtol R
  double atol = 1e-7;                   // --atol A
  int bench = 0;                        // --bench N
  bool profile = false;                 // --profile
  bool json = false;                    // --json
  bool list_ops = false;                // --list-ops
  bool allow_version_mismatch = false;  // --allow-version-mismatch
  std::string device;                   // --device cpu|cuda[:N]
  bool cuda_graph = false;              // --cuda-graph
  bool verbose = false;                 // --verbose
  bool help = false;                    // --help
  bool version = false;                 // --version

  /// --max-graph-mb N: larger graph files are refused before they are read.
  size_t max_graph_mb = kMaxGraphBytes >> 20;
  /// --max-tensor-elements N: ExecutorOptions::max_tensor_elements.
  int64_t max_tensor_elements = ExecutorOptions{}.max_tensor_elements;
};

/// The graph loader's limits the flags ask for (--max-graph-mb).
LoadOptions load_options(const Options& o);

/// The executor options the flags ask for (--device, --cuda-graph, --allow-version-mismatch,
/// --max-tensor-elements);
/// throws ca::Error for a device string c10 does not parse.
ExecutorOptions executor_options(const Options& o);

/// Parses argv; throws ca::Error with a message naming the bad flag or value.
Options parse_args(int argc, char** argv);

/// The text `replay --help` prints.
std::string usage();

/// The text `replay --version` prints: ca-replay's version, the torch this build was compiled
/// against, and the graph format version it reads and writes.
std::string version_text();

}  // namespace ca::cli
