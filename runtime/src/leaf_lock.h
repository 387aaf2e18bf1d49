// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// A leaf's .grad is shared by every thread whose backward reaches the leaf (Hogwild training, two
// losses of one model on two threads): eager's AccumulateGrad reads and writes it holding the
// node's own mutex, so whatever of ours reads or writes a .grad holds that same mutex, and a
// replay on one thread, a capture or walk on another and an eager fallback on a third exclude
// each other as eager's nodes do.

#include <torch/csrc/autograd/functions/accumulate_grad.h>
#include <torch/csrc/autograd/variable.h>

#include <mutex>
#include <optional>

#include "torch_compat.h"

namespace ca::detail {

/// Node::mutex_, the lock eager's AccumulateGrad::apply takes. It is protected: naming it through
/// a subclass gives a pointer to Node's member, which any Node then yields.
inline std::mutex& node_mutex(torch::autograd::Node& node) {
  struct Access : torch::autograd::Node {
    static std::mutex torch::autograd::Node::*member() { return &Access::mutex_; }
  };
  return node.*Access::member();
}

/// Holds an AccumulateGrad node's mutex for a scope; any other node is left alone (their
/// functional forms share no state).
class AccumulateGradLock {
 public:
  explicit AccumulateGradLock(torch::autograd::Node& node) {
    if (typeid(node) == typeid(torch::autograd::AccumulateGrad)) lock_.emplace(node_mutex(node));
  }

 private:
  std::optional<std::lock_guard<std::mutex>> lock_;
};

/// Holds the mutex of `leaf`'s gradient accumulator for a scope, when it has one (without one
/// no eager backward can reach the leaf; replays of ours hold the accumulator alive through
/// their walk).
class LeafGradLock {
 public:
  explicit LeafGradLock(const at::Tensor& leaf)
      : node_(torch::autograd::impl::try_get_grad_accumulator(leaf)) {
    if (node_) node_mutex(*node_).lock();
  }
  ~LeafGradLock() {
    if (node_) node_mutex(*node_).unlock();
  }
  LeafGradLock(const LeafGradLock&) = delete;
  LeafGradLock& operator=(const LeafGradLock&) = delete;

 private:
  compat::NodePtr node_;
};

}  // namespace ca::detail
