// replay --verify FILE: load a graph through every check and print a one-line summary.
#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "ca/error.h"
#include "ca/graph_io.h"
#include "commands.h"

namespace ca::cli {
namespace {

/// Op names shown in the summary before "...".
constexpr size_t kMaxOpsShown = 6;

/// Distinct op names of functional and aten nodes, in first-use order.
std::vector<std::string> ops_used(const Graph& g) {
  std::vector<std::string> ops;
  std::set<std::string> seen;
  for (const Node& n : g.nodes) {
    if (n.kind != NodeKind::kFunctional && n.kind != NodeKind::kAten) continue;
    const std::string name = n.overload.empty() ? n.op : n.op + "." + n.overload;
    if (seen.insert(name).second) ops.push_back(name);
  }
  return ops;
}

std::string summary(const std::string& path, const Graph& g) {
  const std::vector<std::string> ops = ops_used(g);
  std::string list;
  for (size_t i = 0; i < ops.size() && i < kMaxOpsShown; ++i) list += (i ? ", " : "") + ops[i];
  if (ops.size() > kMaxOpsShown) list += ", ...";
  return "ok: " + path + ": " + std::to_string(g.nodes.size()) + " nodes, " +
         std::to_string(g.inputs.size()) + " inputs, " + std::to_string(ops.size()) +
         " ops used (" + list + "), torch " + g.torch_version + ", format " +
         std::to_string(g.format_version);
}

}  // namespace

int cmd_verify(const Options& o) {
  try {
    LoadOptions load;
    load.allow_version_mismatch = o.allow_version_mismatch;
    const Graph g = load_graph(o.verify, load);
    std::printf("%s\n", summary(o.verify, g).c_str());
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "replay: error: %s\n", e.what());
    return 2;
  }
}

}  // namespace ca::cli
