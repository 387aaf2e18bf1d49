// SPDX-License-Identifier: BSD-3-Clause
// A custom autograd function as users write one (never registered with ca-replay):
// save_for_backward, a flag in saved_data, an optional bias whose grad is undefined when absent.
// The main loss runs through built-in nodes; every third step adds an auxiliary loss through the
// custom function, which, unregistered, has no functional form here: the replay calls its live
// node (opaque) and replays the rest.
#include "trainers/programs.h"

namespace trainers {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct Lin : public torch::autograd::Function<Lin> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& w,
                            const std::optional<at::Tensor>& b) {
    ctx->save_for_backward({x, w});
    ctx->saved_data["has_bias"] = b.has_value();
    const at::Tensor y = x.mm(w.t());
    return b.has_value() ? y + *b : y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& g = grads[0];
    const at::Tensor gb = ctx->saved_data["has_bias"].toBool() ? g.sum(0) : at::Tensor();
    return {g.mm(saved[1]), g.t().mm(saved[0]), gb};
  }
};

}  // namespace

int custom_function() {
  torch::manual_seed(3);
  const at::Tensor w1 = (torch::randn({16, 6}) * 0.3).requires_grad_();
  const at::Tensor b1 = torch::zeros({16}, torch::requires_grad());
  const at::Tensor w2 = (torch::randn({1, 16}) * 0.3).requires_grad_();
  torch::optim::Adam opt({w1, b1, w2}, torch::optim::AdamOptions(1e-2));
  const at::Tensor x = torch::randn({24, 6});
  const at::Tensor y = x.narrow(1, 0, 1) * 2 - x.narrow(1, 1, 1);
  int calls = 0, live = 0;  // backwards, and calls of the custom function's node in them
  for (int step = 0; step < 30; ++step) {
    opt.zero_grad();
    const at::Tensor h = torch::linear(x, w1, b1).relu();
    const at::Tensor loss = torch::mse_loss(torch::linear(h, w2), y);
    loss.backward();
    ++calls;
    if (step % 3 == 0) {
      const at::Tensor aux = Lin::apply(x, w1, std::nullopt).pow(2).mean() * 1e-3 +
                             Lin::apply(h.detach(), w2, b1.narrow(0, 0, 1)).abs().mean() * 1e-2;
      aux.backward();
      ++calls;
      live += 2;
      print_loss("aux", step, aux);
    }
    opt.step();
    print_loss("loss", step, loss);
  }
  print_hash("params", {w1, b1, w2});
  std::fprintf(stderr, "calls=%d hooked=%d\n", calls, live);  // run_pair.cmake: each one live
  return 0;
}

}  // namespace trainers
