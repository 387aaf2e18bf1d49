// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The scaffold of the suites that change a real capture and check what a replay makes of it: a
// forward's backward, captured, with eager autograd's gradients as the reference.

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <utility>
#include <vector>

#include "ca/capture.h"

namespace ca::test {

struct CapturedBackward {
  CaptureResult cap;
  std::vector<at::Tensor> params;  ///< the leaves whose .grad a replay writes
  std::vector<at::Tensor> eager;   ///< eager autograd's gradient of each of `params`
};

/// Clears every parameter's .grad (before a replay, so that it starts as eager did).
inline void clear_grads(const CapturedBackward& c) {
  for (const at::Tensor& p : c.params) p.mutable_grad().reset();
}

/// Captures `loss`'s backward, then runs eager backward on it for the reference gradients of
/// `params`, and clears their .grad.
inline CapturedBackward capture_with_eager(const at::Tensor& loss, std::vector<at::Tensor> params) {
  CapturedBackward c;
  c.cap = capture({loss});
  c.params = std::move(params);
  loss.backward();
  for (const at::Tensor& p : c.params) c.eager.push_back(p.grad().clone());
  clear_grads(c);
  return c;
}

/// Passes when every parameter's .grad is eager's (same sizes, allclose at 1e-5 / 1e-6).
inline ::testing::AssertionResult grads_match_eager(const CapturedBackward& c) {
  for (size_t i = 0; i < c.params.size(); ++i) {
    const at::Tensor& got = c.params[i].grad();
    if (!got.defined()) return ::testing::AssertionFailure() << "param " << i << ": no .grad";
    if (!got.sizes().equals(c.eager[i].sizes()) || !torch::allclose(got, c.eager[i], 1e-5, 1e-6)) {
      return ::testing::AssertionFailure() << "param " << i << ": .grad differs from eager's";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace ca::test
