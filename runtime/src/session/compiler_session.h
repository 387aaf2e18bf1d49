// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// One compiler session: the protocol harvest and capture share. Upstream's compiled autograd
// drives each autograd node through `compiled_args` (collect its state) and `apply_with_saved`
// (run it on proxies), and the node calls back into a "Python compiler" through
// PyCompilerInterface. A CompilerSession installs one such interface that forwards every call to
// a CompilerCalls, so harvest and capture differ only in what they do with the calls.

#include <torch/csrc/dynamo/compiled_autograd.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ca::detail {

namespace dyn = torch::dynamo::autograd;
using torch::autograd::variable_list;

/// What a node calls while a session drives it. The defaults refuse the call (CaptureError
/// naming it), so a receiver implements only what it expects.
class CompilerCalls {
 public:
  virtual ~CompilerCalls() = default;

  virtual std::string bind_function(const std::string& name, torch::autograd::functional_apply_t fn,
                                    std::vector<at::TypePtr> schema, bool is_custom_function);
  virtual variable_list call_function(const std::string& name, const variable_list& grads,
                                      const torch::autograd::ivalue_list& packed_args,
                                      const c10::IValue& output_metadata);
  virtual variable_list copy_slices_prologue(const variable_list& grads,
                                             const at::TensorGeometry& base,
                                             const at::TensorGeometry& view);
  virtual variable_list copy_slices_epilogue(const std::vector<bool>& needs_input_grad,
                                             const at::Tensor& result, const variable_list& res,
                                             const at::Tensor& grad_slice);
  virtual at::Tensor unpack_saved(std::optional<size_t> hook_id, size_t hook_input_id);
  virtual at::Tensor accumulate_grad(const at::Tensor& variable, const at::Tensor& variable_grad,
                                     const at::Tensor& grad, bool has_post_hooks);
};

/// Installs the process-wide PyCompilerInterface for its lifetime, forwarding to `calls`
/// (borrowed; must outlive the session). Upstream's PyCompilerGuard is process-global, so
/// sessions take turns: one on another thread waits for this one to end (captures on two threads
/// are serialized; replays never make a session). A session must not be nested on one thread.
class CompilerSession {
 public:
  explicit CompilerSession(CompilerCalls& calls);
  ~CompilerSession();
  CompilerSession(const CompilerSession&) = delete;
  CompilerSession& operator=(const CompilerSession&) = delete;

 private:
  std::unique_lock<std::mutex> turn_;  ///< held first, released last
  std::unique_ptr<dyn::PyCompilerGuard> guard_;
};

/// Pass 1 for one node, as upstream's cache-key pass: its `compiled_args` (saved tensors, sizes,
/// lifted scalars go into `compiler`), then its next edges' metadata when `with_edges`. When
/// `key` is given, appends upstream's cache key of the node: its type (the address of its
/// type_info, valid in this process only), then the bytes of every constant it specialized on.
void collect_node(dyn::AutogradCompilerCall& compiler, dyn::NodeCall& call,
                  torch::autograd::Node& node, bool with_edges, std::string* key = nullptr);

/// Pass 1 for a node capture leaves to itself (an opaque node): nothing of its own state, only
/// its next edges' metadata, which is what its replay step depends on. With `key`, appends a key
/// no collect_node key can equal (a zero where those hold the type), then the type and those
/// bytes.
void collect_opaque(dyn::AutogradCompilerCall& compiler, dyn::NodeCall& call,
                    torch::autograd::Node& node, std::string* key = nullptr);

/// validate_outputs metadata of a node's next edges, packed as upstream packs it.
using EdgeMetadata = std::vector<std::optional<torch::autograd::InputMetadata>>;

/// Pass 2 for one node, as upstream's capture loop: `apply_with_saved` on `grads` with the
/// node's saved state swapped for the proxies already set in `compiler`. Returns its outputs;
/// when `edge_metadata` is given and there are outputs, also the metadata of its next edges, read
/// as the capture loop reads it (between `saved.before` and `saved.after` of the edges).
variable_list apply_node(dyn::AutogradCompilerCall& compiler, dyn::TraceState& state,
                         dyn::NodeCall& call, torch::autograd::Node& node,
                         const variable_list& grads, EdgeMetadata* edge_metadata = nullptr);

}  // namespace ca::detail
