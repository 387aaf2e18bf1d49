// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The torch-internal API differences between the releases we build against (2.11 to 2.14), in
// one place so that no other file tests a torch version. Checked against each release's
// installed headers:
// - 2.11/2.12: `Node` is declared in function.h and owned by std::shared_ptr (Edge::function,
//   grad_fn(), the engine's graph_root); 2.13+: node.h, owned by c10::intrusive_ptr.
// - 2.11/2.12: PyCompilerInterface::call_accumulate_grad(py, variable, grad, has_post_hooks)
//   returns nothing; 2.13+: it also takes the variable's current grad and returns the new grad.
// - InputMetadata packs the same fields (with grad_dtype) in all of them: nothing to adapt.

#include <torch/csrc/dynamo/compiled_autograd.h>
#include <torch/version.h>

#include <memory>
#include <optional>
#include <utility>

#if TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR < 13
#define CA_TORCH_PRE_2_13 1
#include <torch/csrc/autograd/function.h>
#else
#define CA_TORCH_PRE_2_13 0
#include <torch/csrc/autograd/node.h>
#endif

namespace ca::compat {

#if CA_TORCH_PRE_2_13
/// The owning pointer torch uses for autograd nodes (grad_fn(), Edge::function).
using NodePtr = std::shared_ptr<torch::autograd::Node>;
/// Makes a node owned as torch owns it.
template <class T, class... Args>
NodePtr make_node(Args&&... args) {
  return std::make_shared<T>(std::forward<Args>(args)...);
}
#else
using NodePtr = c10::intrusive_ptr<torch::autograd::Node>;
template <class T, class... Args>
NodePtr make_node(Args&&... args) {
  return c10::make_intrusive<T>(std::forward<Args>(args)...);
}
#endif

/// A PyCompilerInterface whose accumulate-grad call has one signature on every release:
/// subclasses implement accumulate_grad(); the release's own virtual forwards to it. On releases
/// whose call returns nothing, the result is dropped and `variable_grad` is the variable's grad.
class CompilerInterfaceBase : public torch::dynamo::autograd::PyCompilerInterface {
 public:
  virtual at::Tensor accumulate_grad(const at::Tensor& variable, const at::Tensor& variable_grad,
                                     const at::Tensor& grad, bool has_post_hooks) const = 0;

#if CA_TORCH_PRE_2_13
  void call_accumulate_grad(PyObject*, const at::Tensor& variable, const at::Tensor& grad,
                            bool has_post_hooks) const override {
    accumulate_grad(variable, variable.grad(), grad, has_post_hooks);
  }
#else
  at::Tensor call_accumulate_grad(PyObject*, const at::Tensor& variable,
                                  const at::Tensor& variable_grad, const at::Tensor& grad,
                                  bool has_post_hooks) const override {
    return accumulate_grad(variable, variable_grad, grad, has_post_hooks);
  }
#endif
};

/// The dtype validate_outputs casts a gradient for this edge target to: its grad_dtype, unset
/// where the metadata was default-constructed (an edge no gradient is checked against). The step
/// key, the steady-state check and capture's opaque outputs all read it through here.
inline std::optional<at::ScalarType> edge_grad_dtype(const torch::autograd::InputMetadata& m) {
  return m.was_default_constructed() ? std::nullopt : m.grad_dtype();
}

}  // namespace ca::compat
