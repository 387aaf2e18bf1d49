// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file
/// Graph files: ca::Graph to and from the FlatBuffers format of schema/ca_graph.fbs.
/// Every buffer ends with a 16-byte checksum trailer (XXH3-64 of the FlatBuffer before it), which
/// guards against corruption, not against a forger.
/// Loading decodes, hostile-input safe: size and file identifier, then the checksum (before any
/// byte of the FlatBuffer is interpreted), then flatbuffers::Verifier,
/// then a range check of every enum and required field while decoding, then the format-version
/// gate. The rest of the load pipeline (structure, op binding, torch compatibility by op schema)
/// is ca::Executor's, so that `replay --verify` and a replay run the very same checks. Nothing
/// here exposes FlatBuffers.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ca/graph.h"

namespace ca {

/// The default largest graph buffer or file accepted by the loaders (256 MiB). A graph holds
/// structure, not tensor data: about 400 bytes a node (the bundled MLP: 35 nodes in 14.5 KB), so
/// 256 MiB is over 600,000 nodes, tens of times the backward of the largest models captured so
/// far, while it bounds what a hostile file can make the loader allocate.
inline constexpr size_t kMaxGraphBytes = size_t{256} << 20;

/// Limits for loading a graph.
struct LoadOptions {
  /// Larger buffers and files are refused before anything is read.
  size_t max_graph_bytes = kMaxGraphBytes;
};

/// Serializes `graph` as-is (no validation, so tests can write broken graphs on purpose), then
/// appends the checksum trailer.
/// Returns a new buffer owned by the caller. Output is deterministic for a given graph.
std::vector<uint8_t> graph_to_bytes(const Graph& graph);

/// Decodes a graph from `size` bytes at `data` (borrowed for the call; any alignment).
/// Throws FormatError for a buffer that is empty, too large, not a ca-replay graph, truncated or
/// corrupt ("checksum mismatch: the file is corrupt (expected ..., computed ...)"), and
/// VersionError for another format version. The graph is not yet validated:
/// constructing a ca::Executor from it runs validate_graph and the rest of the load pipeline.
Graph graph_from_bytes(const uint8_t* data, size_t size, const LoadOptions& options = {});

/// Decodes a graph from FlatBuffers' JSON form of schema/ca_graph.fbs (what `flatc --json`
/// writes, with enum values by name; NaN and Infinity accepted, -0.0 kept): the form the Python
/// exporter emits. The JSON is parsed by FlatBuffers' own parser into the binary form, which
/// then goes through every check graph_from_bytes makes. Throws FormatError naming the line
/// and column of a syntax or schema problem, or the field graph_from_bytes names.
Graph graph_from_json(const std::string& json, const LoadOptions& options = {});

/// Writes graph_to_bytes(graph) to `path` through a new temporary file in the same folder,
/// fsync and rename (never a half-written `path`; an existing file or symlink is not followed).
/// Throws Error naming the path when it cannot be written.
void save_graph(const Graph& graph, const std::string& path);

/// Reads and loads the graph file at `path` as graph_from_bytes does; every error message
/// starts with the path. Throws Error for a missing or unreadable file.
Graph load_graph(const std::string& path, const LoadOptions& options = {});

}  // namespace ca
