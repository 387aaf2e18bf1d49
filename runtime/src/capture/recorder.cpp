// SPDX-License-Identifier: BSD-3-Clause
#include "capture/recorder.h"

#include "arg_convert.h"
#include "ca/error.h"
#include "registry/op_entry.h"

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

std::string Recorder::bind_function(const std::string& name, FunctionalFn,
                                    std::vector<at::TypePtr> schema, bool is_custom_function) {
  observe("bind_function", name);
  // Built-in nodes were bound at harvest; the registry is read-only here, so anything that binds
  // now must already be known to it.
  if (find_op(name) == nullptr) {
    throw CaptureError(is_custom_function
                           ? "custom function '" + name +
                                 "' is not registered: add CA_REGISTER_FUNCTION(T) (or call "
                                 "ca::register_function<T>()) before capturing"
                           : "op '" + name + "' was not resolved when the registry was harvested");
  }
  if (is_custom_function) custom_schemas_[name] = std::move(schema);
  return name;
}

variable_list Recorder::call_function(const std::string& fn_name, const variable_list& inputs,
                                      const torch::autograd::ivalue_list& packed_args,
                                      const c10::IValue& output_metadata) {
  observe("call_function", fn_name);
  const OpEntry* op = find_op(fn_name);
  if (op == nullptr) throw CaptureError("op '" + fn_name + "' is not in the registry");
  const auto custom = custom_schemas_.find(fn_name);
  const std::vector<at::TypePtr>& schema =
      custom != custom_schemas_.end() ? custom->second : op->schema;
  OpSchema recorded{fn_name, {}, op->needs_input_grad_count, op->is_custom_function};
  for (size_t i = 0; i < schema.size(); ++i) {
    recorded.args.push_back(arg_type_of(schema[i], fn_name + " schema[" + std::to_string(i) + "]"));
  }
  builder_->note_op_schema(std::move(recorded));
  std::vector<Arg> args;
  auto id = [&](const at::Tensor& t) { return builder_->id_of(t, fn_name + " packed args"); };
  for (size_t i = 0; i < packed_args.size(); ++i) {
    const c10::TypePtr declared = i < schema.size() ? schema[i] : nullptr;
    args.push_back(arg_from_ivalue(packed_args[i], declared, id,
                                   fn_name + ".args[" + std::to_string(i) + "]"));
  }
  variable_list outputs;
  std::vector<ValueId> defined;
  for (const auto& md : dyn::IValuePacker<MetadataList>::unpack(output_metadata)) {
    at::Tensor proxy;
    ValueId out = kNoValue;
    if (md.has_value()) {
      const auto sizes = concrete(md->shape_as_dim_vector());
      out = builder_->define(sizes, c10::typeMetaToScalarType(md->dtype()), &proxy);
    }
    defined.push_back(out);
    outputs.push_back(proxy);
  }
  builder_->add_node(NodeKind::kFunctional, fn_name, ids_of(inputs, fn_name), args, defined);
  return outputs;
}

variable_list Recorder::copy_slices_prologue(const variable_list& inputs,
                                             const at::TensorGeometry& base,
                                             const at::TensorGeometry& view) {
  observe("copy_slices_prologue");
  std::vector<Arg> args;
  for (const at::TensorGeometry* g : {&base, &view}) {
    args.push_back(constant_arg_from_ivalue(dyn::IValuePacker<at::TensorGeometry>::pack(*g),
                                            dyn::IValuePacker<at::TensorGeometry>::packed_type(),
                                            "CopySlices geometry"));
  }
  const auto dtype = inputs.at(0).scalar_type();
  variable_list out(3);
  std::vector<ValueId> defined;
  defined.push_back(
      builder_->define(concrete(base.sym_sizes()), concrete(base.sym_strides()), dtype, &out[0]));
  const auto view_sizes = concrete(view.sym_sizes());
  defined.push_back(builder_->define(view_sizes, concrete(view.sym_strides()), dtype, &out[1]));
  defined.push_back(builder_->define(view_sizes, dtype, &out[2]));
  builder_->add_node(NodeKind::kCopySlicesPrologue, "", ids_of({inputs.at(0)}, "CopySlices"), args,
                     defined);
  return out;
}

variable_list Recorder::copy_slices_epilogue(const std::vector<bool>& needs_input_grad,
                                             const at::Tensor& result, const variable_list& res,
                                             const at::Tensor& grad_slice) {
  observe("copy_slices_epilogue");
  std::vector<Arg> args;
  variable_list ins{result, grad_slice};
  ins.insert(ins.end(), res.begin(), res.end());
  std::vector<Arg> bools;
  bools.reserve(needs_input_grad.size());
  for (bool b : needs_input_grad) bools.push_back(Arg::boolean(b));
  args.push_back(Arg::list(ArgType{ArgType::Kind::kBool, {}}, std::move(bools)));
  variable_list outputs(needs_input_grad.size());
  std::vector<ValueId> defined;
  for (size_t i = 0; i < needs_input_grad.size(); ++i) {
    const at::Tensor& like = i == 0 ? result : (i < res.size() ? res[i] : at::Tensor());
    defined.push_back(needs_input_grad[i] ? builder_->define_like(like, &outputs[i]) : kNoValue);
  }
  builder_->add_node(NodeKind::kCopySlicesEpilogue, "", ids_of(ins, "CopySlices epilogue"), args,
                     defined);
  return outputs;
}

at::Tensor Recorder::unpack_saved(std::optional<size_t>, size_t) {
  observe("unpack_saved");
  throw CaptureError(
      "saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks) are not "
      "supported: their unpack runs Python");
}

at::Tensor Recorder::accumulate_grad(const at::Tensor& variable, const at::Tensor&,
                                     const at::Tensor& grad, bool has_post_hooks) {
  observe("accumulate_grad");
  builder_->add_node(NodeKind::kAccumulateGrad, "AccumulateGrad",
                     ids_of({variable, grad}, "AccumulateGrad"), {Arg::boolean(has_post_hooks)},
                     {});
  return at::Tensor();
}

}  // namespace ca::detail
