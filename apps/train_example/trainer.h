// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The training loop of train_example: SGD with momentum on a TorchScript model and synthetic
// data, its backward run eagerly, through a CompiledBackward, or through ca::enable().

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "ca/compiled_backward.h"

namespace train {

enum class Mode { kEager, kCompiled, kEnabled };

/// "eager", "compiled", "enabled".
const char* mode_name(Mode mode);

struct Config {
  std::string model_path;  ///< written by make_model.py
  int steps = 200;
  int batch = 16;
  int dataset = 100;  ///< samples per epoch; the last batch of an epoch is smaller
  int aux_every = 5;  ///< take the model's aux branch every N-th step (0: never)
  double lr = 0.05;
  int warmup = 25;  ///< steps left out of the timing (first captures, thread pools, allocator)
};

struct Result {
  std::vector<at::Tensor> state;  ///< parameters then buffers (BatchNorm statistics)
  double seconds = 0;             ///< wall time of the steps after the warm-up
  int timed_steps = 0;
  ca::CompiledBackwardStats stats;
  size_t graphs = 0;  ///< distinct (batch size, branch) pairs the steps used: graphs to capture
};

/// Loads the model afresh (same weights every time) and trains it for `config.steps` steps.
Result train(const Config& config, Mode mode);

}  // namespace train
