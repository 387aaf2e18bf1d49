// SPDX-License-Identifier: BSD-3-Clause
#include <cinttypes>
#include <cstdio>

#include "trainers/programs.h"

namespace trainers {

std::string loss_text(const char* what, int step, const at::Tensor& loss) {
  const at::Tensor l = loss.detach();
  char line[128];
  if (l.scalar_type() == at::kDouble) {
    std::snprintf(line, sizeof line, "%s %d %.17g\n", what, step, l.item<double>());
  } else {
    std::snprintf(line, sizeof line, "%s %d %.9g\n", what, step, l.item<float>());
  }
  return line;
}

std::string hash_text(const char* what, const std::vector<at::Tensor>& tensors) {
  uint64_t h = 1469598103934665603ull;
  for (const at::Tensor& t : tensors) {
    const at::Tensor c = t.detach().contiguous();
    const auto* bytes = static_cast<const unsigned char*>(c.data_ptr());
    for (size_t i = 0; i < c.nbytes(); ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  }
  char line[128];
  std::snprintf(line, sizeof line, "%s %016" PRIx64 "\n", what, h);
  return line;
}

void print_loss(const char* what, int step, const at::Tensor& loss) {
  std::fputs(loss_text(what, step, loss).c_str(), stdout);
}

void print_hash(const char* what, const std::vector<at::Tensor>& tensors) {
  std::fputs(hash_text(what, tensors).c_str(), stdout);
}

const std::vector<Program>& programs() {
  static const std::vector<Program> all = {
      {"gan", &gan},
      {"dropout_noise", &dropout_noise},
      {"custom_function", &custom_function},
      {"gradient_penalty", &gradient_penalty},
      {"hooks_and_retain_grad", &hooks_and_retain_grad},
      {"train_eval", &train_eval},
      {"two_losses", &two_losses},
      {"grad_accumulation", &grad_accumulation},
      {"last_batch", &last_batch},
      {"backward_inputs", &backward_inputs},
      {"user_error", &user_error},
      {"mixed_precision", &mixed_precision},
      {"cnn", &cnn},
      {"threads", &threads},
      {"torchscript", &torchscript},
  };
  return all;
}

}  // namespace trainers
