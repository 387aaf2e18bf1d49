// Load-time work: resolve ops, turn Args into ready IValues with tensor slots, compute last uses.
#include <torch/csrc/dynamo/compiled_autograd.h>

#include <algorithm>
#include <map>

#include "arg_convert.h"
#include "ca/error.h"
#include "ca/graph_validate.h"
#include "ca/version.h"
#include "executor/prepared.h"
#include "executor/schema_check.h"
#include "executor/schema_compat.h"

namespace ca::detail {
namespace {

namespace dyn = torch::dynamo::autograd;
using MetadataList = std::vector<std::optional<torch::autograd::InputMetadata>>;

std::string where(size_t i, const Node& n) {
  return "nodes[" + std::to_string(i) + "] (" + node_kind_name(n.kind) +
         (n.op.empty() ? "" : " " + n.op) + ")";
}

at::Tensor no_tensor(ValueId) { return at::Tensor(); }
int64_t no_int(ValueId) { return 0; }

// A constant arg (no refs) as an IValue.
c10::IValue constant(const Arg& arg, const std::string& at) {
  if (arg_has_refs(arg)) throw FormatError(at + ": expected a constant, found a value reference");
  return ivalue_from_arg(arg, no_tensor, no_int);
}

// Args become IValues; tensor refs at the top level or directly in a list become slots.
void prepare_args(const Node& n, PreparedNode& p) {
  for (uint32_t j = 0; j < n.args.size(); ++j) {
    const Arg& a = n.args[j];
    p.args.push_back(ivalue_from_arg(a, no_tensor, no_int));
    if (a.kind == Arg::Kind::kTensor) {
      if (a.ref != kNoValue) p.slots.push_back({j, -1, a.ref});
    } else if (a.kind == Arg::Kind::kList &&
               std::none_of(a.items.begin(), a.items.end(), [](const Arg& item) {
                 return item.kind != Arg::Kind::kTensor && arg_has_refs(item);
               })) {
      for (size_t k = 0; k < a.items.size(); ++k) {
        if (a.items[k].kind == Arg::Kind::kTensor && a.items[k].ref != kNoValue) {
          p.slots.push_back({j, static_cast<int32_t>(k), a.items[k].ref});
        }
      }
    } else if (arg_has_refs(a)) {
      p.rebuilt_args.push_back(j);
    }
  }
}

void check_schema(const Node& n, const PreparedNode& p, const std::string& at) {
  const auto& schema = p.op->schema;
  if (p.op->is_custom_function) return;  // schema comes from the values themselves
  if (schema.size() != p.args.size()) {
    throw FormatError(at + ": " + std::to_string(p.args.size()) + " packed args, op expects " +
                      std::to_string(schema.size()));
  }
  const int64_t flags = p.op->needs_input_grad_count;
  if (flags >= 0 &&
      (!p.args[0].isBoolList() || static_cast<int64_t>(p.args[0].toBoolList().size()) != flags)) {
    throw FormatError(at + ".args[0]: expected " + std::to_string(flags) +
                      " needs_input_grad flags, got " +
                      (p.args[0].isBoolList() ? std::to_string(p.args[0].toBoolList().size())
                                              : std::string(p.args[0].tagKind())));
  }
  for (size_t j = 0; j < schema.size(); ++j) {
    if (n.args[j].kind == Arg::Kind::kTensor && schema[j]->kind() == c10::TypeKind::TensorType) {
      continue;
    }
    std::string why = schema_mismatch(p.args[j], schema[j]);
    if (!why.empty()) throw FormatError(at + ".args[" + std::to_string(j) + "]: " + why);
  }
}

// Upstream's unpackers index tuples without checking their length: check the shape first.
template <class T>
T unpack_checked(const Arg& arg, const std::string& at) {
  c10::IValue value = constant(arg, at);
  std::string why = schema_mismatch(value, dyn::IValuePacker<T>::packed_type());
  if (!why.empty()) throw FormatError(at + ": malformed args: " + why);
  return dyn::IValuePacker<T>::unpack(value);
}

void prepare_builtin(const Node& n, PreparedNode& p, const std::string& at) {
  try {
    switch (n.kind) {
      case NodeKind::kValidateOutputs:
        p.metadata = unpack_checked<MetadataList>(n.args.at(0), at);
        if (p.metadata.size() != n.inputs.size()) {
          throw FormatError(at + ": metadata for " + std::to_string(p.metadata.size()) +
                            " outputs, node has " + std::to_string(n.inputs.size()));
        }
        break;
      case NodeKind::kCopySlicesPrologue:
        p.base = unpack_checked<at::TensorGeometry>(n.args.at(0), at);
        p.view = unpack_checked<at::TensorGeometry>(n.args.at(1), at);
        break;
      case NodeKind::kCopySlicesEpilogue:
        p.needs_input_grad = unpack_checked<std::vector<bool>>(n.args.at(0), at);
        break;
      case NodeKind::kAccumulateGrad:
        p.has_post_hooks = unpack_checked<bool>(n.args.at(0), at);
        break;
      default:
        break;
    }
  } catch (const c10::Error& e) {
    throw FormatError(at + ": malformed args: " + e.what_without_backtrace());
  }
}

PreparedNode prepare_node(const Node& n, size_t i,
                          std::map<std::string, std::vector<size_t>>& missing) {
  PreparedNode p;
  p.kind = n.kind;
  p.inputs = n.inputs;
  p.outputs = n.outputs;
  const std::string at = where(i, n);
  if (n.kind == NodeKind::kFunctional) {
    p.op = find_op(n.op);
    if (p.op == nullptr) {
      missing[n.op].push_back(i);
      return p;
    }
    prepare_args(n, p);
    check_schema(n, p, at);
  } else if (n.kind == NodeKind::kAten) {
    p.aten = c10::Dispatcher::singleton().findSchema({n.op, n.overload});
    if (!p.aten) {
      missing[n.op + (n.overload.empty() ? "" : "." + n.overload)].push_back(i);
      return p;
    }
    prepare_args(n, p);
  } else {
    prepare_builtin(n, p, at);
  }
  return p;
}

void throw_missing(const std::map<std::string, std::vector<size_t>>& missing) {
  std::string msg = "graph uses " + std::to_string(missing.size()) +
                    " op(s) this runtime cannot resolve (torch " + runtime_torch_version() +
                    "; custom functions need CA_REGISTER_FUNCTION):";
  for (const auto& [name, nodes] : missing) {
    msg += "\n  " + name + " at node";
    for (size_t k = 0; k < nodes.size() && k < 5; ++k) msg += " " + std::to_string(nodes[k]);
    if (nodes.size() > 5) msg += " ...";
  }
  throw OpNotFoundError(msg);
}

void collect_refs(const Arg& a, std::vector<ValueId>& out) {
  if ((a.kind == Arg::Kind::kTensor || a.kind == Arg::Kind::kSymInt) && a.ref != kNoValue) {
    out.push_back(a.ref);
  }
  for (const Arg& item : a.items) collect_refs(item, out);
}

// Each value is freed right after its last reader (or its producer, if nothing reads it).
void plan_frees(PreparedGraph& pg) {
  const Graph& g = pg.graph;
  constexpr size_t kNever = SIZE_MAX;
  std::vector<size_t> last(static_cast<size_t>(g.num_values), kNever - 1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    std::vector<ValueId> refs = g.nodes[i].inputs;
    for (const Arg& a : g.nodes[i].args) collect_refs(a, refs);
    for (ValueId v : g.nodes[i].outputs) {
      if (v != kNoValue) last[static_cast<size_t>(v)] = i;
    }
    for (ValueId v : refs) {
      if (v != kNoValue) last[static_cast<size_t>(v)] = i;
    }
  }
  for (ValueId v : g.outputs) last[static_cast<size_t>(v)] = kNever;
  for (size_t v = 0; v < last.size(); ++v) {
    if (last[v] == kNever - 1) {
      pg.input_frees.push_back(static_cast<ValueId>(v));
    } else if (last[v] != kNever) {
      pg.nodes[last[v]].frees.push_back(static_cast<ValueId>(v));
    }
  }
}

}  // namespace

PreparedGraph prepare(Graph graph, bool allow_version_mismatch) {
  validate_graph(graph);
  check_op_schemas(graph, allow_version_mismatch);
  PreparedGraph pg;
  pg.graph = std::move(graph);
  std::map<std::string, std::vector<size_t>> missing;
  for (size_t i = 0; i < pg.graph.nodes.size(); ++i) {
    pg.nodes.push_back(prepare_node(pg.graph.nodes[i], i, missing));
  }
  if (!missing.empty()) throw_missing(missing);
  plan_frees(pg);
  pg.grad_targets = grad_targets(pg.graph);
  return pg;
}

}  // namespace ca::detail
