#pragma once
/// @file
/// Graph files: ca::Graph to and from the FlatBuffers format of schema/ca_graph.fbs.
/// Loading is hostile-input safe: size and file identifier, then flatbuffers::Verifier, then
/// a range check of every enum during conversion, then ca::validate_graph, then the format
/// and torch version gates. Nothing here exposes FlatBuffers.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ca/graph.h"
#include "ca/version.h"

namespace ca {

/// The largest graph buffer or file accepted by the loaders (512 MiB).
inline constexpr size_t kMaxGraphBytes = size_t{512} << 20;

/// How strictly a graph is loaded.
struct LoadOptions {
  /// Accept a graph captured with another torch version than the runtime's (at your own risk).
  bool allow_version_mismatch = false;
};

/// Serializes `graph` as-is (no validation, so tests can write broken graphs on purpose).
/// Returns a new buffer owned by the caller. Output is deterministic for a given graph.
std::vector<uint8_t> graph_to_bytes(const Graph& graph);

/// Loads a graph from `size` bytes at `data` (borrowed for the call; any alignment).
/// Throws FormatError for a buffer that is empty, too large, not a ca-replay graph, truncated,
/// corrupt or semantically invalid, and VersionError for another format version or, unless
/// `options.allow_version_mismatch`, another torch version than runtime_torch_version().
Graph graph_from_bytes(const uint8_t* data, size_t size, const LoadOptions& options = {});

/// Writes graph_to_bytes(graph) to `path` (through a temporary file, then a rename).
/// Throws Error naming the path when it cannot be written.
void save_graph(const Graph& graph, const std::string& path);

/// Reads and loads the graph file at `path` as graph_from_bytes does; every error message
/// starts with the path. Throws Error for a missing or unreadable file.
Graph load_graph(const std::string& path, const LoadOptions& options = {});

}  // namespace ca
