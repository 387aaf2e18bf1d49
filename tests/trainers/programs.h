// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The trainer corpus: small, complete libtorch training programs written the way users write
// them (torch::nn modules, torch::optim, torch::data or manual batching), not around ca-replay.
// Each prints what a user would look at (losses every step, a hash of the final parameters) to
// stdout; main runs one of them, with or without one `ca::EnableGuard` line.

#include <torch/torch.h>

#include <string>
#include <vector>

namespace trainers {

/// One training program: writes its report to stdout, returns its exit status.
struct Program {
  const char* name;
  int (*run)();
};

/// Every program, by name.
const std::vector<Program>& programs();

/// "step 3 loss 0.693147182\n": the loss as the program sees it (all its digits).
std::string loss_text(const char* what, int step, const at::Tensor& loss);
/// "params 9c1f...\n": FNV-1a over the bytes of every tensor, in order.
std::string hash_text(const char* what, const std::vector<at::Tensor>& tensors);
/// loss_text() to stdout.
void print_loss(const char* what, int step, const at::Tensor& loss);
/// hash_text() to stdout.
void print_hash(const char* what, const std::vector<at::Tensor>& tensors);

int gan();
int dropout_noise();
int custom_function();
int gradient_penalty();
int hooks_and_retain_grad();
int train_eval();
int two_losses();
int grad_accumulation();
int last_batch();
int backward_inputs();
int user_error();
int mixed_precision();
int cnn();
int threads();
int torchscript();

}  // namespace trainers
