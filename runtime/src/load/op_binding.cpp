// SPDX-License-Identifier: BSD-3-Clause
// Op binding: resolve ops, turn packed Args into IValues once, check them against the schema.
#include "load/op_binding.h"

#include <torch/csrc/dynamo/compiled_autograd.h>

#include <map>

#include "arg_convert.h"
#include "ca/error.h"
#include "ca/version.h"
#include "guards/aten_check.h"
#include "guards/guard_table.h"
#include "guards/storage_bounds.h"
#include "load/schema_check.h"
#include "load/shared_constants.h"

namespace ca::detail {
namespace {

namespace dyn = torch::dynamo::autograd;
using Missing = std::map<std::string, std::vector<size_t>>;

at::Tensor no_tensor(ValueId) { return at::Tensor(); }

// A builtin node's arg as an IValue: no tensor references; symbolic sizes (graphs exported with
// dynamic shapes) read as 0 here, enough to check the shape of the arg, and are rebound per run.
c10::IValue constant(const ArgRef& arg, const std::string& at) {
  if (has_refs(arg, Arg::Kind::kTensor)) {
    throw FormatError(at + ": expected a constant, found a tensor reference");
  }
  return ivalue_from_constant_arg(arg);
}

std::vector<c10::IValue> convert_args(const ArgRefs& node_args) {
  std::vector<c10::IValue> args;
  args.reserve(node_args.size());
  for (ArgRef a : node_args) args.push_back(ivalue_from_constant_arg(a));
  return args;
}

// A built-in functional op's args, equal constant containers shared across nodes (custom
// functions run user code on theirs, and aten calls hand theirs to kernels: each gets its own).
std::vector<c10::IValue> convert_args(const ArgRefs& node_args, SharedConstants& shared) {
  std::vector<c10::IValue> args;
  args.reserve(node_args.size());
  for (ArgRef a : node_args) args.push_back(shared.get(a));
  return args;
}

void check_schema(const ArgRefs& node_args, const OpCall& call, const std::string& at) {
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
  auto node_arg = node_args.begin();
  for (size_t j = 0; j < schema.size(); ++j, ++node_arg) {
    if ((*node_arg).kind() == Arg::Kind::kTensor &&
        schema[j]->kind() == c10::TypeKind::TensorType) {
      continue;
    }
    std::string why = schema_mismatch(args[j], schema[j]);
    if (!why.empty()) throw FormatError(at + ".args[" + std::to_string(j) + "]: " + why);
  }
}

// Upstream's unpackers index tuples without checking their length: check the shape first.
template <class T>
T unpack_checked(const ArgRef& arg, const std::string& at) {
  c10::IValue value = constant(arg, at);
  std::string why = schema_mismatch(value, dyn::IValuePacker<T>::packed_type());
  if (!why.empty()) throw FormatError(at + ": malformed args: " + why);
  return dyn::IValuePacker<T>::unpack(value);
}

// What validate_outputs may be handed: metadata of a differentiable, strided input on a CPU or
// CUDA device with a real shape. Anything else reaches torch's internal asserts or silently
// moves a grad to another device type.
void check_metadata(const MetadataList& list, const std::string& at) {
  for (size_t k = 0; k < list.size(); ++k) {
    if (!list[k]) continue;
    const auto& md = *list[k];
    const std::string where = at + ".metadata[" + std::to_string(k) + "]: ";
    const c10::ScalarType dtype = c10::typeMetaToScalarType(md.dtype());
    const auto grad_dtype = md.grad_dtype();
    if (!torch::autograd::isDifferentiableType(dtype) ||
        (grad_dtype && !torch::autograd::isDifferentiableType(*grad_dtype))) {
      throw FormatError(where + "dtype " + c10::toString(grad_dtype.value_or(dtype)) +
                        " is not differentiable (floating point or complex)");
    }
    if (md.layout() != c10::kStrided) throw FormatError(where + "layout is not strided");
    if (!md.device().is_cpu() && !md.device().is_cuda()) {
      throw FormatError(where + "device " + md.device().str() + " is not cpu or cuda");
    }
    for (const c10::SymInt& size : md.shape_as_dim_vector()) {
      if (size.is_heap_allocated() || size.as_int_unchecked() < 0) {
        throw FormatError(where + "shape " + c10::str(md.shape_as_dim_vector()) +
                          " has a negative size");
      }
    }
  }
}

// A packed TensorGeometry is (sizes, strides, offset); torch indexes strides by the sizes' dims.
at::TensorGeometry checked_geometry(const c10::IValue& value, const std::string& at) {
  std::string why = schema_mismatch(value, dyn::IValuePacker<at::TensorGeometry>::packed_type());
  if (!why.empty()) throw FormatError(at + ": malformed args: " + why);
  why = packed_geometry_problem(value);
  if (!why.empty()) throw FormatError(at + ": " + why);
  return dyn::IValuePacker<at::TensorGeometry>::unpack(value);
}

// CopySlices builds a base-shaped buffer and views it with the view's geometry: the view must
// lie inside the base.
CopySlicesGeometry checked_copy_slices(const c10::IValue& base, const c10::IValue& view,
                                       const std::string& at) {
  CopySlicesGeometry g{checked_geometry(base, at + ".args[0]"),
                       checked_geometry(view, at + ".args[1]")};
  const int64_t extent = geometry_extent(g.base.sizes(), g.base.strides());
  const int64_t offset = g.view.storage_offset() - g.base.storage_offset();
  std::string why = geometry_outside(g.view.sizes(), g.view.strides(), offset, extent);
  if (!why.empty()) throw FormatError(at + ": the view is not inside its base: " + why);
  return g;
}

// Symbolic sizes read as 0 here: the view-inside-base check then waits for the real sizes, which
// rebind_geometry checks on every run.
CopySlicesGeometry copy_slices_geometry(const ArgRefs& args, const std::string& at) {
  const c10::IValue base = constant(args.at(0), at + ".args[0]");
  const c10::IValue view = constant(args.at(1), at + ".args[1]");
  if (has_refs(args.at(0)) || has_refs(args.at(1))) {
    return CopySlicesGeometry{checked_geometry(base, at + ".args[0]"),
                              checked_geometry(view, at + ".args[1]")};
  }
  return checked_copy_slices(base, view, at);
}

// Sizes bound per run come from the inputs: the load-time checks run again on them, and what
// they refuse is the inputs' fault.
template <class F>
auto rebound_checked(const std::string& at, F&& rebind) {
  try {
    return rebind();
  } catch (const FormatError& e) {
    throw InputError(std::string("symbolic sizes from the inputs: ") + e.what());
  } catch (const c10::Error& e) {
    throw InputError("symbolic sizes from the inputs: " + at + ": " + e.what_without_backtrace());
  }
}

BoundNode bind_builtin(const Node& n, const ArgRefs& args, const std::string& at) {
  try {
    switch (n.kind) {
      case NodeKind::kValidateOutputs: {
        auto metadata = unpack_checked<MetadataList>(args.at(0), at);
        if (metadata.size() != n.inputs.size) {
          throw FormatError(at + ": metadata for " + std::to_string(metadata.size()) +
                            " outputs, node has " + std::to_string(n.inputs.size));
        }
        check_metadata(metadata, at);
        return metadata;
      }
      case NodeKind::kCopySlicesPrologue:
        return std::make_unique<const CopySlicesGeometry>(copy_slices_geometry(args, at));
      case NodeKind::kCopySlicesEpilogue:
        return CopySlicesFlags{unpack_checked<std::vector<bool>>(args.at(0), at)};
      case NodeKind::kAccumulateGrad:
        return AccumulateGradFlags{unpack_checked<bool>(args.at(0), at)};
      default:
        return std::monostate{};
    }
  } catch (const c10::Error& e) {
    throw FormatError(at + ": malformed args: " + e.what_without_backtrace());
  }
}

BoundNode bind_node(const Graph& g, size_t i, int64_t max_tensor_elements, Missing& missing,
                    SharedConstants& shared) {
  const Node& n = g.nodes[i];
  const ArgRefs args = g.args(n);
  const std::string at = node_path(g, i);
  const std::string op(g.op(n));
  if (n.kind == NodeKind::kFunctional) {
    OpCall call;
    call.op = find_op(op);
    if (call.op == nullptr) {
      missing[op].push_back(i);
      return call;
    }
    call.args = is_builtin_functional(call.op) ? convert_args(args, shared) : convert_args(args);
    check_schema(args, call, at);
    call.check = bind_guards(n, op, args, call.args, at, max_tensor_elements);
    return call;
  }
  if (n.kind == NodeKind::kAten) {
    OpCall call;
    const std::string overload(g.overload(n));
    const auto handle = c10::Dispatcher::singleton().findSchema({op, overload});
    if (!handle) {
      missing[op + (overload.empty() ? "" : "." + overload)].push_back(i);
      return call;
    }
    call.aten = std::make_unique<const c10::OperatorHandle>(*handle);
    call.args = convert_args(args);
    check_aten_node(n, call.aten->schema(), call.args, at);
    return call;
  }
  return bind_builtin(n, args, at);
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

MetadataList rebind_metadata(const ArgRef& metadata, const SizeOf& size_of) {
  const std::string at = "validate_outputs";
  return rebound_checked(at, [&] {
    auto list =
        dyn::IValuePacker<MetadataList>::unpack(ivalue_from_arg(metadata, no_tensor, size_of));
    check_metadata(list, at);
    return list;
  });
}

CopySlicesGeometry rebind_geometry(const ArgRef& base, const ArgRef& view, const SizeOf& size_of) {
  const std::string at = "copy_slices_prologue";
  return rebound_checked(at, [&] {
    return checked_copy_slices(ivalue_from_arg(base, no_tensor, size_of),
                               ivalue_from_arg(view, no_tensor, size_of), at);
  });
}

std::vector<BoundNode> bind_ops(const Graph& graph, bool allow_version_mismatch,
                                int64_t max_tensor_elements, SchemaReport* schemas) {
  *schemas = check_op_schemas(graph, allow_version_mismatch);
  std::vector<BoundNode> bound;
  bound.reserve(graph.nodes.size());
  Missing missing;
  SharedConstants shared;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    try {
      bound.push_back(bind_node(graph, i, max_tensor_elements, missing, shared));
    } catch (const c10::Error& e) {  // torch refused a value the checks above let through
      throw FormatError(node_path(graph, i) + ": " + e.what_without_backtrace());
    }
  }
  if (!missing.empty()) throw_missing(missing);
  return bound;
}

}  // namespace ca::detail
