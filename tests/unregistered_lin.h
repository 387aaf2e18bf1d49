// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// A custom autograd function as users write one, never registered with ca-replay: x @ w (+ b)
// with save_for_backward, a flag in saved_data and an optional bias whose grad is undefined when
// it is absent. Capture refuses it; tests check what is left for eager afterwards.

#include <torch/torch.h>

#include <optional>

namespace ca::test {

struct UnregisteredLin : public torch::autograd::Function<UnregisteredLin> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                            const at::Tensor& w, const std::optional<at::Tensor>& b) {
    ctx->save_for_backward({x, w});
    ctx->saved_data["has_bias"] = b.has_value();
    const at::Tensor y = x.mm(w);
    return b.has_value() ? y + *b : y;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& g = grads[0];
    at::Tensor gb = ctx->saved_data["has_bias"].toBool() ? g.sum(0) : at::Tensor();
    return {g.mm(saved[1].t()), saved[0].t().mm(g), gb};
  }
};

}  // namespace ca::test
