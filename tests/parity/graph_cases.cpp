// SPDX-License-Identifier: BSD-3-Clause
#include "ca/custom_function.h"
#include "parity/parity_cases.h"

namespace ca::testing {

/// y = scale * x^2 with a saved tensor and a saved scalar: a custom C++ function.
struct ScaledSquare : public torch::autograd::Function<ScaledSquare> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                            double scale) {
    ctx->save_for_backward({x});
    ctx->saved_data["scale"] = scale;
    return x * x * scale;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto x = ctx->get_saved_variables()[0];
    const double scale = ctx->saved_data["scale"].toDouble();
    return {grads[0] * 2 * scale * x, at::Tensor()};
  }
};
CA_REGISTER_FUNCTION(ScaledSquare);

std::vector<ParityCase> graph_cases() {
  return {
      {"parameter_used_twice",
       [] {
         auto w = leaf({4, 4});
         auto x = torch::randn({3, 4});
         return scalar(torch::linear(torch::linear(x, w).tanh(), w).sum());
       }},
      {"unused_branch",
       [] {
         auto w = leaf({4}), u = leaf({4});
         auto unused = (u * 3).exp();  // never reaches the loss
         (void)unused;
         return scalar((w * u.detach()).sum() + w.pow(2).sum());
       }},
      {"two_losses_as_roots",
       [] {
         auto w = leaf({5}), v = leaf({5});
         return Forward{{(w * v).sum(), (w.exp() - v).pow(2).mean()}, {}};
       }},
      {"non_scalar_root_with_grad",
       [] {
         auto w = leaf({3, 4});
         return Forward{{w.sin() * 2}, {torch::randn({3, 4})}};
       }},
      {"custom_cpp_function",
       [] {
         auto x = leaf({6});
         return scalar(ScaledSquare::apply(x.exp(), 1.5).sum());
       }},
  };
}

}  // namespace ca::testing
