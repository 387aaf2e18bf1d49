#pragma once
// The C++ PyCompilerInterface installed during capture: each call a node makes into the
// "Python compiler" becomes an IR node, with proxies mapped to value ids.

#include <torch/csrc/dynamo/compiled_autograd.h>

#include "capture/graph_builder.h"

namespace ca::detail {

class Recorder final : public torch::dynamo::autograd::PyCompilerInterface {
 public:
  explicit Recorder(GraphBuilder* builder) : builder_(builder) {}

  std::string bind_function(PyObject* py_compiler, const std::string& fn_name,
                            torch::autograd::functional_apply_t fn,
                            std::vector<at::TypePtr> packed_args_schema, bool is_custom_function,
                            bool is_traceable) const override;
  torch::autograd::variable_list call_function(PyObject* py_compiler, const char* method_name,
                                               const std::string& fn_name,
                                               const torch::autograd::variable_list& inputs,
                                               const torch::autograd::ivalue_list& packed_args,
                                               const c10::IValue& output_metadata) const override;
  torch::autograd::variable_list call_copy_slices_prologue(
      PyObject* py_compiler, const torch::autograd::variable_list& inputs,
      const at::TensorGeometry& base, const at::TensorGeometry& view) const override;
  torch::autograd::variable_list call_copy_slices_epilogue(
      PyObject* py_compiler, const std::vector<bool>& needs_input_grad, const at::Tensor& result,
      const torch::autograd::variable_list& res, const at::Tensor& grad_slice) const override;
  at::Tensor call_unpack(PyObject* py_compiler, std::optional<size_t> hook_id,
                         size_t hook_input_id) const override;
  at::Tensor call_accumulate_grad(PyObject* py_compiler, const at::Tensor& variable,
                                  const at::Tensor& variable_grad, const at::Tensor& grad,
                                  bool has_post_hooks) const override;

 private:
  std::vector<ValueId> ids_of(const torch::autograd::variable_list& ts,
                              const std::string& where) const;

  GraphBuilder* builder_;
};

}  // namespace ca::detail
