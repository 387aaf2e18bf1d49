// SPDX-License-Identifier: BSD-3-Clause
#include "load/schema_compat.h"

#include <algorithm>

#include "arg_convert.h"
#include "ca/error.h"
#include "ca/version.h"
#include "registry/op_entry.h"

namespace ca::detail {
namespace {

/// "2.13.0+cpu" -> "2.13.0".
std::string release_of(const std::string& v) { return v.substr(0, v.find('+')); }

std::string signature(const std::string& op, const std::vector<ArgType>& args, int64_t flags) {
  std::string text = op + "(";
  for (size_t i = 0; i < args.size(); ++i) {
    text += (i > 0 ? ", " : "");
    try {
      text += type_ptr_of(args[i])->str();
    } catch (const Error&) {
      text += "<malformed type>";
    }
  }
  text += ")";
  if (flags >= 0) text += " with " + std::to_string(flags) + " needs_input_grad flags";
  return text;
}

const OpSchema* recorded_schema(const Graph& g, std::string_view op) {
  auto it = std::lower_bound(g.op_schemas.begin(), g.op_schemas.end(), op,
                             [](const OpSchema& s, std::string_view name) { return s.op < name; });
  return it != g.op_schemas.end() && it->op == op ? &*it : nullptr;
}

// Every functional node names an op with a recorded schema (unknown ops are resolution's to
// report).
void check_recorded(const Graph& g) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.kind == NodeKind::kFunctional && recorded_schema(g, g.op(n)) == nullptr &&
        find_op(std::string(g.op(n))) != nullptr) {
      throw FormatError(node_path(g, i) + ": the graph records no packed-args schema for op " +
                        std::string(g.op(n)) + " (op_schemas)");
    }
  }
}

}  // namespace

SchemaReport check_op_schemas(const Graph& graph, bool allow_version_mismatch) {
  check_recorded(graph);
  SchemaReport report;
  report.captured_torch = graph.torch_version;
  const std::string runtime = runtime_torch_version();
  report.same_torch = release_of(graph.torch_version) == release_of(runtime);
  for (const OpSchema& recorded : graph.op_schemas) {
    const OpEntry* op = find_op(recorded.op);
    if (op == nullptr) continue;
    if (op->is_custom_function || recorded.is_custom_function) {
      ++report.custom_functions;
      continue;
    }
    ++report.ops_checked;
    std::vector<ArgType> have;
    for (const at::TypePtr& t : op->schema) have.push_back(arg_type_of(t, recorded.op));
    if (have == recorded.args && op->needs_input_grad_count == recorded.needs_input_grad_count) {
      continue;
    }
    report.mismatches.push_back(
        "graph uses " + signature(recorded.op, recorded.args, recorded.needs_input_grad_count) +
        " but torch " + runtime + " has " +
        signature(recorded.op, have, op->needs_input_grad_count));
  }
  if (report.mismatches.empty() || allow_version_mismatch) return report;
  std::string msg;
  for (const std::string& m : report.mismatches) msg += "\n  " + m;
  if (report.same_torch) {
    throw FormatError("the graph's recorded op schemas differ from torch " + runtime +
                      "'s although it was captured with the same release:" + msg);
  }
  const std::string captured =
      graph.torch_version.empty() ? "an unrecorded torch version" : "torch " + graph.torch_version;
  throw VersionError("graph captured with " + captured + " uses " +
                     std::to_string(report.mismatches.size()) +
                     " op(s) whose packed-args schema differs in this runtime (torch " + runtime +
                     "; allow_version_mismatch / --allow-version-mismatch loads it anyway, at your "
                     "own risk):" +
                     msg);
}

}  // namespace ca::detail
