// Op binding: resolve ops, turn packed Args into IValues once, check them against the schema.
#include "executor/op_binding.h"

#include <torch/csrc/dynamo/compiled_autograd.h>

#include <map>

#include "arg_convert.h"
#include "ca/error.h"
#include "ca/version.h"
#include "executor/schema_check.h"

namespace ca::detail {
namespace {

namespace dyn = torch::dynamo::autograd;
using Missing = std::map<std::string, std::vector<size_t>>;

std::string where(size_t i, const Node& n) {
  return "nodes[" + std::to_string(i) + "] (" + node_kind_name(n.kind) +
         (n.op.empty() ? "" : " " + n.op) + ")";
}

at::Tensor no_tensor(ValueId) { return at::Tensor(); }
int64_t no_int(ValueId) { return 0; }

bool has_tensor_refs(const Arg& a) {
  if (a.kind == Arg::Kind::kTensor && a.ref != kNoValue) return true;
  for (const Arg& item : a.items) {
    if (has_tensor_refs(item)) return true;
  }
  return false;
}

// A builtin node's arg as an IValue: no tensor references; symbolic sizes (graphs exported with
// dynamic shapes) read as 0 here, enough to check the shape of the arg, and are rebound per run.
c10::IValue constant(const Arg& arg, const std::string& at) {
  if (has_tensor_refs(arg)) {
    throw FormatError(at + ": expected a constant, found a tensor reference");
  }
  return ivalue_from_arg(arg, no_tensor, no_int);
}

std::vector<c10::IValue> convert_args(const Node& n) {
  std::vector<c10::IValue> args;
  args.reserve(n.args.size());
  for (const Arg& a : n.args) args.push_back(ivalue_from_arg(a, no_tensor, no_int));
  return args;
}

void check_schema(const Node& n, const OpCall& call, const std::string& at) {
  const auto& schema = call.op->schema;
  const auto& args = call.args;
  if (call.op->is_custom_function) return;  // schema comes from the values themselves
  if (schema.size() != args.size()) {
    throw FormatError(at + ": " + std::to_string(args.size()) + " packed args, op expects " +
                      std::to_string(schema.size()));
  }
  const int64_t flags = call.op->needs_input_grad_count;
  if (flags >= 0 &&
      (!args[0].isBoolList() || static_cast<int64_t>(args[0].toBoolList().size()) != flags)) {
    throw FormatError(at + ".args[0]: expected " + std::to_string(flags) +
                      " needs_input_grad flags, got " +
                      (args[0].isBoolList() ? std::to_string(args[0].toBoolList().size())
                                            : std::string(args[0].tagKind())));
  }
  for (size_t j = 0; j < schema.size(); ++j) {
    if (n.args[j].kind == Arg::Kind::kTensor && schema[j]->kind() == c10::TypeKind::TensorType) {
      continue;
    }
    std::string why = schema_mismatch(args[j], schema[j]);
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

BoundNode bind_builtin(const Node& n, const std::string& at) {
  try {
    switch (n.kind) {
      case NodeKind::kValidateOutputs: {
        auto metadata = unpack_checked<MetadataList>(n.args.at(0), at);
        if (metadata.size() != n.inputs.size()) {
          throw FormatError(at + ": metadata for " + std::to_string(metadata.size()) +
                            " outputs, node has " + std::to_string(n.inputs.size()));
        }
        return metadata;
      }
      case NodeKind::kCopySlicesPrologue:
        return CopySlicesGeometry{unpack_checked<at::TensorGeometry>(n.args.at(0), at),
                                  unpack_checked<at::TensorGeometry>(n.args.at(1), at)};
      case NodeKind::kCopySlicesEpilogue:
        return CopySlicesFlags{unpack_checked<std::vector<bool>>(n.args.at(0), at)};
      case NodeKind::kAccumulateGrad:
        return AccumulateGradFlags{unpack_checked<bool>(n.args.at(0), at)};
      default:
        return std::monostate{};
    }
  } catch (const c10::Error& e) {
    throw FormatError(at + ": malformed args: " + e.what_without_backtrace());
  }
}

BoundNode bind_node(const Node& n, size_t i, Missing& missing) {
  const std::string at = where(i, n);
  if (n.kind == NodeKind::kFunctional) {
    OpCall call;
    call.op = find_op(n.op);
    if (call.op == nullptr) {
      missing[n.op].push_back(i);
      return call;
    }
    call.args = convert_args(n);
    check_schema(n, call, at);
    return call;
  }
  if (n.kind == NodeKind::kAten) {
    OpCall call;
    call.aten = c10::Dispatcher::singleton().findSchema({n.op, n.overload});
    if (!call.aten) {
      missing[n.op + (n.overload.empty() ? "" : "." + n.overload)].push_back(i);
      return call;
    }
    call.args = convert_args(n);
    return call;
  }
  return bind_builtin(n, at);
}

void throw_missing(const Missing& missing) {
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

}  // namespace

MetadataList rebind_metadata(const Arg& metadata, const SizeOf& size_of) {
  return dyn::IValuePacker<MetadataList>::unpack(ivalue_from_arg(metadata, no_tensor, size_of));
}

CopySlicesGeometry rebind_geometry(const Arg& base, const Arg& view, const SizeOf& size_of) {
  using Packer = dyn::IValuePacker<at::TensorGeometry>;
  return CopySlicesGeometry{Packer::unpack(ivalue_from_arg(base, no_tensor, size_of)),
                            Packer::unpack(ivalue_from_arg(view, no_tensor, size_of))};
}

std::vector<BoundNode> bind_ops(const Graph& graph, bool allow_version_mismatch,
                                SchemaReport* schemas) {
  *schemas = check_op_schemas(graph, allow_version_mismatch);
  std::vector<BoundNode> bound;
  bound.reserve(graph.nodes.size());
  Missing missing;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    bound.push_back(bind_node(graph.nodes[i], i, missing));
  }
  if (!missing.empty()) throw_missing(missing);
  return bound;
}

}  // namespace ca::detail
