// SPDX-License-Identifier: BSD-3-Clause
// Bytes/file -> ca::Graph: envelope, checksum, verifier, decoding, format-version gate. Structure
// (validate_graph), op binding and torch compatibility are the executor's load steps, run once.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ca/error.h"
#include "ca/graph_io.h"
#include "ca_graph_generated.h"
#include "file_bytes.h"
#include "graph_checksum.h"
#include "graph_reader.h"

namespace ca {
namespace {

/// Nesting of tables (graph > node > arg > ... > arg type) the verifier accepts. Deeper than
/// anything validate_graph accepts, and it bounds the reader's recursion.
constexpr flatbuffers::uoffset_t kMaxDepth = 64;
/// Upper bound on tables the verifier visits; also limited to size / 4 per buffer.
constexpr size_t kMaxTables = size_t{1} << 24;
/// Root offset plus file identifier.
constexpr size_t kMinGraphBytes = 8;

/// Names what a buffer that is not a ca-replay graph looks like.
std::string describe_foreign(const uint8_t* data, size_t size) {
  if (size >= 4 && std::memcmp(data, "PK\x03\x04", 4) == 0) {
    return "a zip archive (a torch.save .pt file?), not a ca-replay graph";
  }
  const size_t n = std::min<size_t>(size, 16);
  bool text = true;
  for (size_t i = 0; i < n; ++i) text = text && (std::isprint(data[i]) || std::isspace(data[i]));
  std::string head;
  for (size_t i = 0; i < n; ++i) {
    char hex[4];
    std::snprintf(hex, sizeof hex, "%02x", data[i]);
    head += text ? std::string(1, std::isprint(data[i]) ? char(data[i]) : ' ') : hex;
  }
  return std::string("not a ca-replay graph: no 'CAGR' file identifier; it starts with ") +
         (text ? "text \"" + head + "\"" : "bytes " + head);
}

void check_envelope(const uint8_t* data, size_t size, const LoadOptions& options) {
  if (size == 0) throw FormatError("empty (0 bytes), expected a ca-replay graph");
  if (size > options.max_graph_bytes) {
    throw FormatError(std::to_string(size) + " bytes, more than the limit of " +
                      std::to_string(options.max_graph_bytes) + " (LoadOptions::max_graph_bytes)");
  }
  if (size >= kMinGraphBytes && flatbuffers::BufferHasIdentifier(data, fb::GraphIdentifier())) {
    return;
  }
  if (size < kMinGraphBytes && !(size >= 4 && std::memcmp(data, "PK\x03\x04", 4) == 0)) {
    throw FormatError(std::to_string(size) + " bytes, too small for a ca-replay graph (at least " +
                      std::to_string(kMinGraphBytes) + ")");
  }
  throw FormatError(describe_foreign(data, size));
}

const fb::Graph& verify(const uint8_t* data, size_t size) {
  flatbuffers::Verifier::Options opts;
  opts.max_depth = kMaxDepth;
  opts.max_tables = static_cast<flatbuffers::uoffset_t>(std::min(kMaxTables, size / 4));
  opts.check_alignment = true;
  opts.check_nested_flatbuffers = false;
  flatbuffers::Verifier verifier(data, size, opts);
  if (!fb::VerifyGraphBuffer(verifier)) {
    throw FormatError("corrupt or truncated graph (" + std::to_string(size) +
                      " bytes): FlatBuffers verification failed (bad offset, size, alignment, "
                      "or nesting deeper than " +
                      std::to_string(kMaxDepth) + ")");
  }
  return *fb::GetGraph(data);
}

std::string version_message(uint32_t version) {
  std::string msg = "graph file format version " + std::to_string(version) +
                    ", this runtime reads format version " + std::to_string(kFormatVersion);
  if (version == 1) msg += " (format 1 records no op schemas: capture the graph again)";
  return msg;
}

Graph load_aligned(const uint8_t* data, size_t size) {
  const fb::Graph& root = verify(data, size);
  Graph g;
  try {
    g = detail::read_graph(root, size);
  } catch (const FormatError& e) {
    // A file of another format version that does not parse as ours: say so first.
    if (root.format_version() != kFormatVersion) {
      throw VersionError(version_message(root.format_version()) + " (as format " +
                         std::to_string(kFormatVersion) + " it fails: " + e.what() + ")");
    }
    throw;
  }
  if (g.format_version != kFormatVersion) throw VersionError(version_message(g.format_version));
  return g;
}

// A graph of format 1 carries no checksum trailer: when there is none and the whole buffer
// verifies as a graph of another format version, say so rather than "corrupt".
void throw_if_older_format(const uint8_t* data, size_t size) {
  if (detail::has_checksum_trailer(data, size)) return;  // a damaged file, not an old one
  std::vector<uint64_t> aligned((size + 7) / 8);
  std::memcpy(aligned.data(), data, size);
  uint32_t version = kFormatVersion;
  try {
    version = verify(reinterpret_cast<const uint8_t*>(aligned.data()), size).format_version();
  } catch (const FormatError&) {
    return;  // not a graph of any format: the checksum error stands
  }
  if (version != kFormatVersion) throw VersionError(version_message(version));
}

}  // namespace

Graph graph_from_bytes(const uint8_t* data, size_t size, const LoadOptions& options) {
  if (data == nullptr && size != 0) {
    throw FormatError("null buffer of " + std::to_string(size) + " bytes");
  }
  check_envelope(data, size, options);
  // Integrity before interpretation: no FlatBuffer offset is followed until the hash matches.
  size_t payload = 0;
  try {
    payload = detail::checked_payload_size(data, size);
  } catch (const FormatError&) {
    throw_if_older_format(data, size);
    throw;
  }
  if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) == 0) {
    return load_aligned(data, payload);
  }
  // FlatBuffers reads 8-byte scalars in place: give it an aligned copy.
  std::vector<uint64_t> aligned((payload + 7) / 8);
  std::memcpy(aligned.data(), data, payload);
  return load_aligned(reinterpret_cast<const uint8_t*>(aligned.data()), payload);
}

void save_graph(const Graph& graph, const std::string& path) {
  const std::vector<uint8_t> bytes = graph_to_bytes(graph);
  detail::write_file_bytes(path, bytes.data(), bytes.size());
}

Graph load_graph(const std::string& path, const LoadOptions& options) {
  const std::vector<uint8_t> bytes = detail::read_file_bytes(path, options.max_graph_bytes);
  try {
    return graph_from_bytes(bytes.data(), bytes.size(), options);
  } catch (Error& e) {
    e.add_context(path + ": ");
    throw;
  }
}

}  // namespace ca
