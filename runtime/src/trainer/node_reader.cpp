// SPDX-License-Identifier: BSD-3-Clause
#include "trainer/node_reader.h"

#include <torch/csrc/autograd/functions/accumulate_grad.h>
#include <torch/csrc/autograd/functions/basic_ops.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <algorithm>
#include <typeindex>
#include <unordered_map>

namespace ca::detail {

void StepTensors::add(const at::Tensor& t) {
  if (expected_ == nullptr) {  // recording
    uint32_t id = 0;
    if (t.defined()) {
      auto [it, added] = seen_.emplace(t.unsafeGetTensorImpl(), inputs_.size() + 1);
      if (added) inputs_.push_back(t);
      id = it->second;
    }
    ids_.push_back(id);
    return;
  }
  if (next_ >= expected_->size()) {
    ok_ = false;
    return;
  }
  const uint32_t id = (*expected_)[next_++];
  if (!t.defined()) {
    ok_ = ok_ && id == 0;
  } else if (id == inputs_.size() + 1) {
    inputs_.push_back(t);
  } else if (id == 0 || id > inputs_.size() ||
             inputs_[id - 1].unsafeGetTensorImpl() != t.unsafeGetTensorImpl()) {
    ok_ = false;
  }
}

bool StepTensors::complete() const {
  if (!ok_) return false;
  if (expected_ == nullptr) return true;
  if (next_ != expected_->size()) return false;
  // Two ids the recording told apart must be two tensors now, as upstream would not merge them.
  std::vector<const c10::TensorImpl*> impls;
  impls.reserve(inputs_.size());
  for (const at::Tensor& t : inputs_) impls.push_back(t.unsafeGetTensorImpl());
  std::sort(impls.begin(), impls.end());
  return std::adjacent_find(impls.begin(), impls.end()) == impls.end();
}

void NodeReader::collect(const torch::autograd::SavedVariable& sv, bool is_output) {
  if (sv.has_hooks()) {  // upstream unpacks these in the graph: the full walk's business
    ok_ = false;
    return;
  }
  tensors_.add(sv.unpack(is_output ? *node_ : compat::NodePtr()));
}

void NodeReader::collect(const c10::Scalar& s) {
  const c10::ScalarType type = s.type();
  put(type);
  if (type == c10::ScalarType::Double) {
    put(s.toDouble());
  } else if (type == c10::ScalarType::Long) {
    put(s.toLong());
  } else if (type == c10::ScalarType::Bool) {
    put(s.toBool());
  } else if (type == c10::ScalarType::ComplexDouble) {
    put(s.toComplexDouble());
  } else {
    ok_ = false;  // upstream asserts: the full walk says so
  }
}

namespace {

// Written by hand as their compiled_args are: the root's gradients, and the leaf with its .grad
// (the caller holds the accumulator's lock). GradMode is read as the newest compiled_args reads it.
void read_graph_root(const torch::autograd::Node& node, NodeReader& r) {
  r.collect(static_cast<const torch::autograd::GraphRoot&>(node).outputs);
}

void read_accumulate_grad(const torch::autograd::Node& node, NodeReader& r) {
  const auto& acc = static_cast<const torch::autograd::AccumulateGrad&>(node);
  if (acc.tensor_post_acc_grad_hooks() != nullptr) {
    r.refuse();
    return;
  }
  const bool live = acc.variable.defined() && acc.variable.requires_grad();
  r.collect(live);
  if (live) {
    r.collect(acc.variable);
    r.collect(acc.variable.grad());
  }
  r.collect(c10::GradMode::is_enabled());
}

}  // namespace

NodeReadFn node_reader_for(const std::type_info& type) {
  // Filled once, on first use, and only read after: the registry of readers.
  static const std::unordered_map<std::type_index, NodeReadFn> kReaders = [] {
    std::unordered_map<std::type_index, NodeReadFn> m;
    for (const NodeReaderEntry& e : generated_node_readers()) m.emplace(*e.type, e.read);
    m.emplace(typeid(torch::autograd::GraphRoot), &read_graph_root);
    m.emplace(typeid(torch::autograd::AccumulateGrad), &read_accumulate_grad);
    return m;
  }();
  auto it = kReaders.find(type);
  return it == kReaders.end() ? nullptr : it->second;
}

}  // namespace ca::detail
