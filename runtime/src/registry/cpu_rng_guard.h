// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Keeps the default CPU generator's state across a scope. Harvest drives default-constructed
// nodes through their backward setup, and some of them draw random numbers (sample tensors,
// nodes whose constructors or packers touch the generator); a trainer that seeds once at start
// must still see eager's stream after its first backward.

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>

#include <mutex>

namespace ca::detail {

/// Saves the default CPU generator's whole state (seed, Mersenne Twister state, cached normal
/// values) on construction and puts it back on destruction, even when the scope throws. Only the
/// CPU generator needs this: harvest runs CPU nodes only, never touching an accelerator's.
class CpuRngGuard {
 public:
  CpuRngGuard() : generator_(at::detail::getDefaultCPUGenerator()) {
    std::lock_guard lock(generator_.mutex());
    state_ = generator_.get_state();
  }
  ~CpuRngGuard() {
    std::lock_guard lock(generator_.mutex());
    generator_.set_state(state_);
  }
  CpuRngGuard(const CpuRngGuard&) = delete;
  CpuRngGuard& operator=(const CpuRngGuard&) = delete;

 private:
  at::Generator generator_;
  at::Tensor state_;
};

}  // namespace ca::detail
