// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// What capture does with a node's compiler calls: each becomes an IR node, with proxies mapped to
// value ids, and each functional op's packed-args schema is recorded for the graph.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "capture/graph_builder.h"
#include "session/compiler_session.h"

namespace ca::detail {

/// Called with the call's name ("call_function MulBackward0", "accumulate_grad", ...) before
/// capture records each compiler call and after each node's own work; a test throws from it to
/// fail capture at every point it can fail. Empty: nothing is called.
using CaptureObserver = std::function<void(const std::string& point)>;

class Recorder final : public CompilerCalls {
 public:
  explicit Recorder(GraphBuilder* builder, const CaptureObserver* observer = nullptr)
      : builder_(builder), observer_(observer) {}

  std::string bind_function(const std::string& name, torch::autograd::functional_apply_t fn,
                            std::vector<at::TypePtr> schema, bool is_custom_function) override;
  variable_list call_function(const std::string& name, const variable_list& grads,
                              const torch::autograd::ivalue_list& packed_args,
                              const c10::IValue& output_metadata) override;
  variable_list copy_slices_prologue(const variable_list& grads, const at::TensorGeometry& base,
                                     const at::TensorGeometry& view) override;
  variable_list copy_slices_epilogue(const std::vector<bool>& needs_input_grad,
                                     const at::Tensor& result, const variable_list& res,
                                     const at::Tensor& grad_slice) override;
  at::Tensor unpack_saved(std::optional<size_t> hook_id, size_t hook_input_id) override;
  at::Tensor accumulate_grad(const at::Tensor& variable, const at::Tensor& variable_grad,
                             const at::Tensor& grad, bool has_post_hooks) override;

 private:
  std::vector<ValueId> ids_of(const variable_list& ts, const std::string& where) const;
  void observe(const char* call, const std::string& op = std::string()) const {
    if (observer_ != nullptr && *observer_) (*observer_)(op.empty() ? call : call + (" " + op));
  }

  GraphBuilder* builder_;
  const CaptureObserver* observer_;
  /// Custom functions report their schema (computed from their values) with each binding.
  std::map<std::string, std::vector<at::TypePtr>> custom_schemas_;
};

}  // namespace ca::detail
