// SPDX-License-Identifier: BSD-3-Clause
// backward(inputs=...): alternate phases train only the encoder or only the decoder; the other's
// .grad must stay as it was (here: undefined after zero_grad(set_to_none)).
#include "trainers/programs.h"

namespace trainers {

int backward_inputs() {
  torch::manual_seed(10);
  torch::nn::Linear enc(6, 3), dec(3, 6);
  std::vector<at::Tensor> enc_p = enc->parameters(), dec_p = dec->parameters();
  std::vector<at::Tensor> all = enc_p;
  all.insert(all.end(), dec_p.begin(), dec_p.end());
  torch::optim::SGD opt(all, torch::optim::SGDOptions(0.1));
  const at::Tensor x = torch::randn({30, 6});
  for (int step = 0; step < 30; ++step) {
    opt.zero_grad();
    const at::Tensor loss = torch::mse_loss(dec->forward(torch::tanh(enc->forward(x))), x);
    const bool train_enc = (step / 5) % 2 == 0;
    torch::autograd::backward({loss}, {}, std::nullopt, false, train_enc ? enc_p : dec_p);
    std::printf("step %d enc_grad %d dec_grad %d\n", step, enc_p[0].grad().defined() ? 1 : 0,
                dec_p[0].grad().defined() ? 1 : 0);
    opt.step();
    print_loss("loss", step, loss);
  }
  print_hash("params", all);
  return 0;
}

}  // namespace trainers
