// SPDX-License-Identifier: BSD-3-Clause
// replay --encode FILE|- --out bwd.fb: a graph file from FlatBuffers' JSON form of the schema,
// written by the one C++ writer (the Python exporter hands its graphs over this way).
#include <cstdio>
#include <fstream>
#include <iostream>

#include "ca/error.h"
#include "ca/graph_io.h"
#include "ca/graph_validate.h"
#include "commands.h"

namespace ca::cli {
namespace {

// The whole text of `path` ("-": stdin), refused past `limit` bytes.
std::string read_text(const std::string& path, size_t limit) {
  std::ifstream file;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) throw Error(path + ": cannot be read");
  }
  std::istream& in = path == "-" ? std::cin : file;
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > limit) {
      throw FormatError((path == "-" ? std::string("stdin") : path) + ": more than " +
                        std::to_string(limit) + " bytes (--max-graph-mb)");
    }
  }
  return text;
}

}  // namespace

int cmd_encode(const Options& o) {
  if (o.out.empty()) throw Error("--encode needs --out FILE: where to write the graph file");
  const LoadOptions limits = load_options(o);
  const std::string source = o.encode == "-" ? "stdin" : o.encode;
  Graph graph;
  try {
    graph = graph_from_json(read_text(o.encode, limits.max_graph_bytes), limits);
    validate_graph(graph);
  } catch (Error& e) {
    e.add_context(source + ": ");
    throw;
  }
  save_graph(graph, o.out);
  std::printf("wrote %s: %zu nodes, %zu inputs\n", o.out.c_str(), graph.nodes.size(),
              graph.inputs.size());
  return 0;
}

}  // namespace ca::cli
