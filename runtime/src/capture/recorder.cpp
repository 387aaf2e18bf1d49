#include "capture/recorder.h"

#include "arg_convert.h"
#include "ca/error.h"
#include "ca/op_registry.h"

namespace ca::detail {
namespace {

namespace dyn = torch::dynamo::autograd;
using torch::autograd::InputMetadata;
using torch::autograd::variable_list;
using MetadataList = std::vector<std::optional<InputMetadata>>;

// Capture specializes every size (static shapes), so symbolic sizes are always concrete here.
std::vector<int64_t> concrete(c10::SymIntArrayRef sizes) {
  return C10_AS_INTARRAYREF_SLOW(sizes).vec();
}

}  // namespace

std::vector<ValueId> Recorder::ids_of(const variable_list& ts, const std::string& where) const {
  std::vector<ValueId> ids;
  ids.reserve(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    ids.push_back(builder_->id_of(ts[i], where + ".inputs[" + std::to_string(i) + "]"));
  }
  return ids;
}

std::string Recorder::bind_function(PyObject*, const std::string& fn_name, FunctionalFn fn,
                                    std::vector<at::TypePtr> schema, bool is_custom_function,
                                    bool) const {
  // Built-in nodes were bound once, at harvest; this is a custom function or a node type
  // harvest could not reach. The first binding of a name wins.
  OpRegistry::global().add({fn_name, std::move(fn), std::move(schema), is_custom_function});
  return fn_name;
}

variable_list Recorder::call_function(PyObject*, const char* method_name,
                                      const std::string& fn_name, const variable_list& inputs,
                                      const torch::autograd::ivalue_list& packed_args,
                                      const c10::IValue& output_metadata) const {
  if (std::string(method_name) != "apply_functional") {
    throw CaptureError(fn_name + ": unsupported compiler call '" + method_name + "'");
  }
  const OpEntry& op = OpRegistry::global().get(fn_name);
  Node node;
  node.kind = NodeKind::kFunctional;
  node.op = fn_name;
  node.inputs = ids_of(inputs, fn_name);
  auto id = [&](const at::Tensor& t) { return builder_->id_of(t, fn_name + " packed args"); };
  for (size_t i = 0; i < packed_args.size(); ++i) {
    const c10::TypePtr declared = i < op.schema.size() ? op.schema[i] : nullptr;
    node.args.push_back(arg_from_ivalue(packed_args[i], declared, id,
                                        fn_name + ".args[" + std::to_string(i) + "]"));
  }
  variable_list outputs;
  for (const auto& md : dyn::IValuePacker<MetadataList>::unpack(output_metadata)) {
    at::Tensor proxy;
    ValueId out = kNoValue;
    if (md.has_value()) {
      const auto sizes = concrete(md->shape_as_dim_vector());
      out = builder_->define(sizes, c10::typeMetaToScalarType(md->dtype()), &proxy);
    }
    node.outputs.push_back(out);
    outputs.push_back(proxy);
  }
  builder_->add_node(std::move(node));
  return outputs;
}

variable_list Recorder::call_copy_slices_prologue(PyObject*, const variable_list& inputs,
                                                  const at::TensorGeometry& base,
                                                  const at::TensorGeometry& view) const {
  Node node;
  node.kind = NodeKind::kCopySlicesPrologue;
  node.inputs = ids_of({inputs.at(0)}, "CopySlices");
  for (const at::TensorGeometry* g : {&base, &view}) {
    node.args.push_back(constant_arg_from_ivalue(
        dyn::IValuePacker<at::TensorGeometry>::pack(*g),
        dyn::IValuePacker<at::TensorGeometry>::packed_type(), "CopySlices geometry"));
  }
  const auto dtype = inputs.at(0).scalar_type();
  variable_list out(3);
  node.outputs.push_back(
      builder_->define(concrete(base.sym_sizes()), concrete(base.sym_strides()), dtype, &out[0]));
  const auto view_sizes = concrete(view.sym_sizes());
  node.outputs.push_back(
      builder_->define(view_sizes, concrete(view.sym_strides()), dtype, &out[1]));
  node.outputs.push_back(builder_->define(view_sizes, dtype, &out[2]));
  builder_->add_node(std::move(node));
  return out;
}

variable_list Recorder::call_copy_slices_epilogue(PyObject*,
                                                  const std::vector<bool>& needs_input_grad,
                                                  const at::Tensor& result,
                                                  const variable_list& res,
                                                  const at::Tensor& grad_slice) const {
  Node node;
  node.kind = NodeKind::kCopySlicesEpilogue;
  variable_list ins{result, grad_slice};
  ins.insert(ins.end(), res.begin(), res.end());
  node.inputs = ids_of(ins, "CopySlices epilogue");
  std::vector<Arg> bools;
  for (bool b : needs_input_grad) bools.push_back(Arg::boolean(b));
  node.args.push_back(Arg::list(ArgType{ArgType::Kind::kBool, {}}, std::move(bools)));
  variable_list outputs(needs_input_grad.size());
  for (size_t i = 0; i < needs_input_grad.size(); ++i) {
    const at::Tensor& like = i == 0 ? result : (i < res.size() ? res[i] : at::Tensor());
    node.outputs.push_back(needs_input_grad[i] ? builder_->define_like(like, &outputs[i])
                                               : kNoValue);
  }
  builder_->add_node(std::move(node));
  return outputs;
}

at::Tensor Recorder::call_unpack(PyObject*, std::optional<size_t>, size_t) const {
  throw CaptureError(
      "saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks) are not "
      "supported: their unpack runs Python");
}

at::Tensor Recorder::call_accumulate_grad(PyObject*, const at::Tensor& variable, const at::Tensor&,
                                          const at::Tensor& grad, bool has_post_hooks) const {
  Node node;
  node.kind = NodeKind::kAccumulateGrad;
  node.op = "AccumulateGrad";
  node.inputs = ids_of({variable, grad}, "AccumulateGrad");
  node.args.push_back(Arg::boolean(has_post_hooks));
  builder_->add_node(std::move(node));
  return at::Tensor();
}

}  // namespace ca::detail
