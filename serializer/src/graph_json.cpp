// SPDX-License-Identifier: BSD-3-Clause
// FlatBuffers' JSON form of a graph -> ca::Graph. FlatBuffers' own parser turns the JSON into the
// binary form of schema/ca_graph.fbs (the schema text is compiled in), which then takes the very
// path of a graph file: checksum, verifier, reader. So the Python exporter, which emits this
// JSON, shares the C++ writer, its checksum and every load check.
#include <flatbuffers/idl.h>

#include <cstdio>
#include <cstring>

#include "ca/error.h"
#include "ca/graph_io.h"
#include "graph_checksum.h"
#include "schema_text.h"

namespace ca {
namespace {

// FlatBuffers says "2: 30: error: unknown enum value: Sideways"; we say where in words.
std::string parser_error(const std::string& error) {
  int line = 0, column = 0, used = 0;
  if (std::sscanf(error.c_str(), "%d: %d: error: %n", &line, &column, &used) == 2 && used > 0) {
    return "line " + std::to_string(line) + ", column " + std::to_string(column) + ": " +
           error.substr(static_cast<size_t>(used));
  }
  return error;
}

}  // namespace

Graph graph_from_json(const std::string& json, const LoadOptions& options) {
  if (json.size() > options.max_graph_bytes) {
    throw FormatError("graph JSON of " + std::to_string(json.size()) +
                      " bytes, more than the limit of " + std::to_string(options.max_graph_bytes) +
                      " (LoadOptions::max_graph_bytes)");
  }
  // A search for a NUL byte, not a terminated string:
  // NOLINTNEXTLINE(bugprone-not-null-terminated-result)
  if (std::memchr(json.data(), '\0', json.size()) != nullptr) {
    throw FormatError("graph JSON: contains a NUL byte");
  }
  flatbuffers::IDLOptions opts;
  opts.force_defaults = true;  // write every scalar as given: -0.0 keeps its sign
  flatbuffers::Parser parser(opts);
  if (!parser.Parse(detail::kGraphSchemaText)) {
    throw Error("the compiled-in graph schema does not parse: " + parser.error_);
  }
  if (!parser.Parse(json.c_str())) {
    throw FormatError("graph JSON: " + parser_error(parser.error_));
  }
  const uint8_t* fb = parser.builder_.GetBufferPointer();
  std::vector<uint8_t> bytes(fb, fb + parser.builder_.GetSize());
  detail::append_checksum(bytes);
  try {
    return graph_from_bytes(bytes.data(), bytes.size(), options);
  } catch (Error& e) {
    e.add_context("graph JSON: ");
    throw;
  }
}

}  // namespace ca
