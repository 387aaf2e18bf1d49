// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Per-call checks of the functional ops whose code trusts what only a run knows: a grad's rank
// (repeat_backward computes `grad.dim() - sizes.size()` as a size_t and indexes repeats by it)
// or the values inside a saved tensor (max-pool indices, embedding indices, CTC lengths and
// targets are used as raw offsets). A crafted graph or `.pt` batch could make those read or
// write outside memory. Load-time rules (op_rules.h) cover what the packed args alone decide;
// these run on every call, on the filled args, before the op, and throw ExecutionError naming
// the arg or grad and the expectation. Index values on an accelerator are checked without a
// host sync (a CUDA graph may be capturing): a bad one there is a device-side assert.

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <string>
#include <vector>

#include "guards/op_rules.h"

namespace ca::detail {

class CallView;

/// The check of one op, bound to its packed-arg names. Empty (`!*this`) for ops that have none.
class CallCheck {
 public:
  using Fn = void (*)(const CallView&);

  CallCheck() = default;
  /// The check for functional op `op` with `packed_args` packed args; empty when the op has
  /// none, or when the generated rules were made for another packing of it.
  static CallCheck find(const std::string& op, size_t packed_args);

  explicit operator bool() const { return fn_ != nullptr; }
  /// Throws ExecutionError when `grads` and `args` (filled for this run) break the op's check.
  void operator()(const std::vector<at::Tensor>& grads, const std::vector<c10::IValue>& args) const;

 private:
  CallCheck(Fn fn, const OpRules* rules) : fn_(fn), rules_(rules) {}
  Fn fn_ = nullptr;
  const OpRules* rules_ = nullptr;
};

/// What a check reads: the call's grads and its args by upstream's names.
class CallView {
 public:
  CallView(const OpRules& rules, const std::vector<at::Tensor>& grads,
           const std::vector<c10::IValue>& args)
      : rules_(rules), grads_(grads), args_(args) {}

  /// grads[k], undefined when the call has fewer.
  const at::Tensor& grad(size_t k) const;
  /// The packed arg named `name` (an op's check names only args its op has).
  const c10::IValue& arg(const char* name) const;
  /// The packed tensor `name`; undefined when it is not a defined tensor.
  const at::Tensor& tensor(const char* name) const;
  int64_t integer(const char* name) const;
  /// An int list, or a tensor of ints (CtcLossBackward1's lengths), as values.
  std::vector<int64_t> ints(const char* name) const;

  [[noreturn]] void fail(const char* name, const std::string& why) const;
  [[noreturn]] void fail_grad(size_t k, const std::string& why) const;

 private:
  size_t position(const char* name) const;
  const OpRules& rules_;
  const std::vector<at::Tensor>& grads_;
  const std::vector<c10::IValue>& args_;
};

/// One op's check (call_check_table.cpp); the table is sorted by op name.
struct CallCheckEntry {
  const char* op;
  CallCheck::Fn fn;
};
const std::vector<CallCheckEntry>& call_check_table();

}  // namespace ca::detail
