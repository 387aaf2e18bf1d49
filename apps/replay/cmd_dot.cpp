// SPDX-License-Identifier: BSD-3-Clause
// replay --dot FILE: the graph as Graphviz on stdout, so that a backward can be looked at
// (`replay --dot bwd.fb | dot -Tsvg > bwd.svg`). Graph inputs are ellipses, nodes boxes coloured
// by kind, edges the values that flow between them (dashed: a tensor a node reads from its packed
// args, e.g. a saved tensor); nodes the executor's load removes are greyed.
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "ca/error.h"
#include "ca/escape.h"
#include "ca/executor.h"
#include "ca/graph_dump.h"
#include "ca/graph_io.h"
#include "commands.h"

namespace ca::cli {
namespace {

// A DOT label: names come from the file, so control and non-UTF-8 bytes are escaped first (as
// everywhere else), then what DOT itself would read as syntax; lines are joined with DOT's \n.
std::string dot_label(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += "\\n";
    for (char c : escape_text(lines[i])) {
      if (c == '\n' || c == '\r' || c == '\t') {  // escape_text keeps these; DOT gets spaces
        out += ' ';
        continue;
      }
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
  }
  return out;
}

const char* fill_of(NodeKind kind) {
  switch (kind) {
    case NodeKind::kFunctional:
      return "#cfe2ff";
    case NodeKind::kValidateOutputs:
      return "#fff3cd";
    case NodeKind::kAccumulate:
      return "#e2e3e5";
    case NodeKind::kAccumulateGrad:
      return "#d1e7dd";
    case NodeKind::kCopySlicesPrologue:
    case NodeKind::kCopySlicesEpilogue:
      return "#f8d7da";
    case NodeKind::kAten:
      return "#e0cffc";
    case NodeKind::kOpaque:  // never in a file; a graph handed over in process
      return "#ffe5d0";
  }
  return "white";
}

std::vector<std::string> input_label(const GraphInput& in, size_t k) {
  return {std::to_string(k) + ": " + in.name, format_input(in)};
}

std::vector<std::string> node_label(const Graph& g, size_t i, bool runs) {
  const Node& n = g.nodes[i];
  std::vector<std::string> lines{std::to_string(i) + " " + node_kind_name(n.kind)};
  const std::string op(g.op(n));
  if (!op.empty() && op != node_kind_name(n.kind)) {
    lines.push_back(op + (g.overload(n).empty() ? "" : "." + std::string(g.overload(n))));
  }
  if (!runs) lines.emplace_back("(elided at load)");
  return lines;
}

// Tensor values a node's packed args refer to (saved tensors, symbolic sizes).
void arg_refs(const ArgRefs& args, std::vector<ValueId>& out) {
  for_each_ref(args, [&out](const ArgRef& ref) {
    out.push_back(ref.ref());
    return true;
  });
}

class DotWriter {
 public:
  DotWriter(const Graph& g, const Executor* ex) : g_(g), ex_(ex) {
    producer_.assign(static_cast<size_t>(g.num_values), std::string());
    for (size_t k = 0; k < g.inputs.size() && k < producer_.size(); ++k) {
      producer_[k] = "i" + std::to_string(k);
    }
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (ValueId v : g.ids(g.nodes[i].outputs)) {
        if (v >= 0 && static_cast<size_t>(v) < producer_.size()) {
          producer_[static_cast<size_t>(v)] = "n" + std::to_string(i);
        }
      }
    }
  }

  std::string write(const std::string& title) {
    out_ = "digraph backward {\n  graph [rankdir=TB, labelloc=t, fontname=Helvetica, label=\"" +
           dot_label({title}) + "\"];\n  node [fontname=Helvetica, fontsize=10];\n" +
           "  edge [fontname=Helvetica, fontsize=8];\n";
    for (size_t k = 0; k < g_.inputs.size(); ++k) {
      out_ += "  i" + std::to_string(k) + " [shape=ellipse, label=\"" +
              dot_label(input_label(g_.inputs[k], k)) + "\"];\n";
    }
    for (size_t i = 0; i < g_.nodes.size(); ++i) write_node(i);
    if (!g_.outputs.empty()) {  // graphs that only write .grad have none
      out_ += "  out [shape=doubleoctagon, label=\"outputs\"];\n";
      for (ValueId v : g_.outputs) edge(v, "out", "");
    }
    return out_ + "}\n";
  }

 private:
  void write_node(size_t i) {
    const Node& n = g_.nodes[i];
    const bool runs = ex_ == nullptr || ex_->runs_node(i);
    const std::string id = "n" + std::to_string(i);
    out_ += "  " + id + " [shape=box, style=\"filled" + (runs ? "" : ",dashed") +
            "\", fillcolor=\"" + (runs ? fill_of(n.kind) : "#f5f5f5") + "\"" +
            (runs ? "" : ", color=grey60, fontcolor=grey50") + ", label=\"" +
            dot_label(node_label(g_, i, runs)) + "\"];\n";
    for (ValueId v : g_.ids(n.inputs)) edge(v, id, "");
    std::vector<ValueId> refs;
    arg_refs(g_.args(n), refs);
    for (ValueId v : refs) edge(v, id, "style=dashed, ");
  }

  void edge(ValueId v, const std::string& to, const std::string& style) {
    if (v < 0 || static_cast<size_t>(v) >= producer_.size() ||
        producer_[static_cast<size_t>(v)].empty()) {
      return;  // undefined, or out of range in a graph the loader did not accept
    }
    out_ += "  " + producer_[static_cast<size_t>(v)] + " -> " + to + " [" + style + "label=\"%" +
            std::to_string(v) + "\"];\n";
  }

  const Graph& g_;
  const Executor* ex_;
  std::vector<std::string> producer_;  // "i3" or "n7" per value id
  std::string out_;
};

}  // namespace

int cmd_dot(const Options& o) {
  Graph g = load_graph(o.dot, load_options(o));  // errors go to main: stderr, exit 2
  std::optional<Executor> ex;
  try {
    ex.emplace(Graph(g), executor_options(o));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plan: not built, no node shown as elided: %s\n", e.what());
  }
  const size_t runs = ex ? ex->stats().plan_steps : g.nodes.size();
  const std::string title = o.dot + ": " + std::to_string(g.nodes.size()) + " nodes (" +
                            std::to_string(runs) + " run), " + std::to_string(g.inputs.size()) +
                            " inputs, torch " + g.torch_version;
  std::fputs(DotWriter(g, ex ? &*ex : nullptr).write(title).c_str(), stdout);
  return 0;
}

}  // namespace ca::cli
