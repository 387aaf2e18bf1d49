// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Tensor helpers shared by the C++ tests that replay captured graphs.

#include <ATen/ATen.h>

#include <vector>

namespace ca::test {

/// Detached clones of `ts`: what a replay from files would see, unrelated to the autograd graph.
inline std::vector<at::Tensor> copies(const std::vector<at::Tensor>& ts) {
  std::vector<at::Tensor> out;
  out.reserve(ts.size());
  for (const auto& t : ts) out.push_back(t.detach().clone());
  return out;
}

}  // namespace ca::test
