// SPDX-License-Identifier: BSD-3-Clause
#include "session/compiler_session.h"

#include "ca/error.h"
#include "torch_compat.h"

namespace ca::detail {
namespace {

using torch::autograd::ivalue_list;

// Nodes only forward the py_compiler pointer; any non-null value serves in C++.
PyObject* session_py_compiler() {
  static char tag;
  return reinterpret_cast<PyObject*>(&tag);
}

[[noreturn]] void refuse(const std::string& what) {
  throw CaptureError("unexpected compiler call during this session: " + what);
}

// The interface upstream's nodes call; every call goes to the session's CompilerCalls.
class Forwarder final : public compat::CompilerInterfaceBase {
 public:
  explicit Forwarder(CompilerCalls& calls) : calls_(calls) {}

  std::string bind_function(PyObject*, const std::string& name,
                            torch::autograd::functional_apply_t fn, std::vector<at::TypePtr> schema,
                            bool is_custom_function, bool) const override {
    return calls_.bind_function(name, std::move(fn), std::move(schema), is_custom_function);
  }
  variable_list call_function(PyObject*, const char* method, const std::string& name,
                              const variable_list& grads, const ivalue_list& packed_args,
                              const c10::IValue& output_metadata) const override {
    if (std::string(method) != "apply_functional") {
      throw CaptureError(name + ": unsupported compiler call '" + method + "'");
    }
    return calls_.call_function(name, grads, packed_args, output_metadata);
  }
  variable_list call_copy_slices_prologue(PyObject*, const variable_list& grads,
                                          const at::TensorGeometry& base,
                                          const at::TensorGeometry& view) const override {
    return calls_.copy_slices_prologue(grads, base, view);
  }
  variable_list call_copy_slices_epilogue(PyObject*, const std::vector<bool>& needs_input_grad,
                                          const at::Tensor& result, const variable_list& res,
                                          const at::Tensor& grad_slice) const override {
    return calls_.copy_slices_epilogue(needs_input_grad, result, res, grad_slice);
  }
  at::Tensor call_unpack(PyObject*, std::optional<size_t> hook_id,
                         size_t hook_input_id) const override {
    return calls_.unpack_saved(hook_id, hook_input_id);
  }
  at::Tensor accumulate_grad(const at::Tensor& variable, const at::Tensor& variable_grad,
                             const at::Tensor& grad, bool has_post_hooks) const override {
    return calls_.accumulate_grad(variable, variable_grad, grad, has_post_hooks);
  }

 private:
  CompilerCalls& calls_;
};

}  // namespace

std::string CompilerCalls::bind_function(const std::string& name,
                                         torch::autograd::functional_apply_t,
                                         std::vector<at::TypePtr>, bool) {
  return name;
}
variable_list CompilerCalls::call_function(const std::string& name, const variable_list&,
                                           const ivalue_list&, const c10::IValue&) {
  refuse("apply_functional " + name);
}
variable_list CompilerCalls::copy_slices_prologue(const variable_list&, const at::TensorGeometry&,
                                                  const at::TensorGeometry&) {
  refuse("copy_slices_prologue");
}
variable_list CompilerCalls::copy_slices_epilogue(const std::vector<bool>&, const at::Tensor&,
                                                  const variable_list&, const at::Tensor&) {
  refuse("copy_slices_epilogue");
}
at::Tensor CompilerCalls::unpack_saved(std::optional<size_t>, size_t) {
  refuse("unpack (saved-tensor hooks)");
}
at::Tensor CompilerCalls::accumulate_grad(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                          bool) {
  refuse("accumulate_grad");
}

CompilerSession::CompilerSession(CompilerCalls& calls)
    : guard_(std::make_unique<dyn::PyCompilerGuard>(std::make_unique<Forwarder>(calls))) {}

CompilerSession::~CompilerSession() = default;

namespace {

// Upstream's CacheKey keeps a node key's length in 16 bits (CompiledNodeArgs::key()), so a key
// past 64 KiB would be compared by a prefix only and a changed constant past it would replay
// stale. The whole length is a private member; explicit instantiation may name it (access checks
// do not apply to its template arguments), which is how this reads it.
using KeySizeMember = size_t dyn::CompiledNodeArgs::*;
KeySizeMember key_size_member();
template <KeySizeMember M>
struct KeySizeAccess {
  friend KeySizeMember key_size_member() { return M; }
};
template struct KeySizeAccess<&dyn::CompiledNodeArgs::_specialization_key_size>;

}  // namespace

void collect_node(dyn::AutogradCompilerCall& compiler, dyn::NodeCall& call,
                  torch::autograd::Node& node, bool with_edges, std::string* key) {
  dyn::CompiledNodeArgs args(compiler, call);
  node.compiled_args(args);
  if (with_edges) args.collect(node.next_edges());
  if (key != nullptr) {
    const dyn::CacheKey k = args.key();
    const size_t type = k.node_type.hash_code();
    key->append(reinterpret_cast<const char*>(&type), sizeof type);
    key->append(reinterpret_cast<const char*>(k.key), args.*key_size_member());
  }
}

variable_list apply_node(dyn::AutogradCompilerCall& compiler, dyn::TraceState& state,
                         dyn::NodeCall& call, torch::autograd::Node& node,
                         const variable_list& grads, EdgeMetadata* edge_metadata) {
  dyn::SwapSavedVariables saved(compiler, state, session_py_compiler(), call);
  variable_list outputs = node.apply_with_saved(grads, saved);
  if (edge_metadata != nullptr && !outputs.empty()) {
    saved.before(node.next_edges());
    *edge_metadata = dyn::get_input_metadata(node.next_edges());
    saved.after(node.next_edges());
  }
  return outputs;
}

}  // namespace ca::detail
