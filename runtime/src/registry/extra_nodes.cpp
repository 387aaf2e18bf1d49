// SPDX-License-Identifier: BSD-3-Clause
// The hand-written autograd nodes that bind a functional form under their own name.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/functions/accumulate_grad.h>
#include <torch/csrc/autograd/functions/tensor.h>

#include "registry/harvest.h"

namespace ca::detail {
namespace {

NodeSample make_copy_backwards() {
  return {compat::make_node<torch::autograd::CopyBackwards>(), {}};
}

// AccumulateGrad only binds when its variable requires grad and the incoming grad is defined.
NodeSample make_accumulate_grad() {
  at::Tensor variable = at::zeros({1}).set_requires_grad(true);
  return {compat::make_node<torch::autograd::AccumulateGrad>(variable), {at::ones({1})}};
}

}  // namespace

const std::vector<NodeFactory>& extra_node_factories() {
  static const std::vector<NodeFactory> kFactories = {
      {"CopyBackwards", &make_copy_backwards},
      {"AccumulateGrad", &make_accumulate_grad},
  };
  return kFactories;
}

}  // namespace ca::detail
