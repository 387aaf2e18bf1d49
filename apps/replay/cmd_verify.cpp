// SPDX-License-Identifier: BSD-3-Clause
// replay --verify FILE: run the whole load pipeline (decode, structure, op binding, schema
// compatibility, plan) -- the very code a replay runs -- and print a one-line summary.
#include <ATen/Context.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "ca/device_placement.h"
#include "ca/error.h"
#include "ca/escape.h"
#include "ca/executor.h"
#include "ca/graph_io.h"
#include "ca/version.h"
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
    const std::string name(g.overload(n).empty()
                               ? std::string(g.op(n))
                               : std::string(g.op(n)) + "." + std::string(g.overload(n)));
    if (seen.insert(name).second) ops.push_back(name);
  }
  return ops;
}

std::string schemas(const ExecutorStats& st) {
  const size_t match = st.ops_schema_checked - st.ops_schema_mismatched;
  std::string text =
      std::to_string(match) + " of " + std::to_string(st.ops_schema_checked) + " match";
  return st.ops_schema_mismatched > 0 ? text + " (loaded with --allow-version-mismatch)" : text;
}

std::string summary(const std::string& path, const Executor& ex) {
  const Graph& g = ex.graph();
  const std::vector<std::string> ops = ops_used(g);
  std::string list;
  for (size_t i = 0; i < ops.size() && i < kMaxOpsShown; ++i) list += (i ? ", " : "") + ops[i];
  if (ops.size() > kMaxOpsShown) list += ", ...";
  return "ok: " + path + ": " + std::to_string(g.nodes.size()) + " nodes, " +
         std::to_string(g.inputs.size()) + " inputs, " + std::to_string(ops.size()) +
         " ops used (" + list + "), format " + std::to_string(g.format_version) +
         ", captured with torch " + (g.torch_version.empty() ? "?" : g.torch_version) +
         " (runtime " + runtime_torch_version() + "), written by ca-replay " +
         (g.writer_version.empty() ? "? (a file from before 0.2.0)" : g.writer_version) +
         ", op schemas: " + schemas(ex.stats()) +
         ", plan: " + std::to_string(ex.stats().plan_steps) + " steps, " +
         std::to_string(ex.stats().validates_elided) + " validate_outputs elided";
}

}  // namespace

std::string placement_report(const Graph& g, const DevicePlacement& p) {
  size_t moved = 0;
  for (const InputPlacement& in : p.inputs) moved += in.device != p.target ? 0 : 1;
  return "placement on " + p.target.str() + " (graph recorded on " + p.home.str() +
         "): " + std::to_string(moved) + " of " + std::to_string(g.inputs.size()) +
         " inputs bound there; CPU scalars: " + std::to_string(p.scalars_moved) + " move, " +
         std::to_string(p.scalars_kept) + " stay\n" + describe_scalars(g, p);
}

int cmd_verify(const Options& o) {
  try {
    ExecutorOptions options = executor_options(o);
    Graph graph = load_graph(o.verify, load_options(o));
    if (options.device) {
      // The placement is a pure function of the graph: shown even where the device is absent.
      std::printf(
          "%s", escape_text(placement_report(graph, place_graph(graph, *options.device))).c_str());
      if (options.device->is_cuda() && !at::hasCUDA()) {
        std::printf("plan only: CUDA is not available here; the load pipeline runs for cpu\n");
        options.device.reset();
        options.cuda_graph = false;
      }
    }
    const Executor ex(std::move(graph), options);
    std::printf("%s\n", escape_text(summary(o.verify, ex)).c_str());  // names from the file
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "replay: error: %s\n", e.what());
    return 2;
  }
}

}  // namespace ca::cli
