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
//
// A check is bound once per node at load (guard_table.h): the packed args it reads are resolved
// from upstream's names to positions then, and int lists the graph holds as constants are
// converted then, so a call reads by index and allocates nothing for them.

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ca/graph.h"
#include "guards/op_rules.h"

namespace ca::detail {

/// A packed arg a check reads: its position in the op's packing and upstream's name of it.
struct Slot {
  uint32_t pos = 0;
  const char* name = "";
};

/// A packed int list (or a tensor of ints) a check reads; `constant` holds its values when the
/// graph stores them (no reference filled per run), converted once at bind.
struct IntsSlot {
  Slot slot;
  std::optional<std::vector<int64_t>> constant;
};

/// The values of an IntsSlot for one call: a view of the bound constant, or this call's own.
class IntList {
 public:
  /// A view of `constant`, which the bound check owns and outlives the call.
  explicit IntList(const std::vector<int64_t>* constant) : constant_(constant) {}
  explicit IntList(std::vector<int64_t> values) : values_(std::move(values)) {}

  at::IntArrayRef view() const { return constant_ != nullptr ? *constant_ : values_; }
  size_t size() const { return view().size(); }
  const int64_t* begin() const { return view().begin(); }
  const int64_t* end() const { return view().end(); }
  int64_t operator[](size_t i) const { return view()[i]; }

 private:
  const std::vector<int64_t>* constant_ = nullptr;
  std::vector<int64_t> values_;
};

/// What a check reads of one call: its grads and its filled packed args, by bound slot.
class CallView {
 public:
  CallView(const char* op, const std::vector<at::Tensor>& grads,
           const std::vector<c10::IValue>& args)
      : op_(op), grads_(grads), args_(args) {}

  /// grads[k], undefined when the call has fewer.
  const at::Tensor& grad(size_t k) const;
  const c10::IValue& arg(Slot s) const { return args_[s.pos]; }
  /// The packed tensor at `s`; undefined when it is not a defined tensor.
  const at::Tensor& tensor(Slot s) const;
  int64_t integer(Slot s) const;
  /// An int list, or a tensor of ints (CtcLossBackward1's lengths), as values.
  IntList ints(const IntsSlot& s) const;

  [[noreturn]] void fail(Slot s, const std::string& why) const;
  [[noreturn]] void fail_grad(size_t k, const std::string& why) const;

 private:
  const char* op_;
  const std::vector<at::Tensor>& grads_;
  const std::vector<c10::IValue>& args_;
};

/// One op's per-call check, bound to a node's slots; throws ExecutionError.
using RunGuard = std::function<void(const CallView&)>;

/// A node's packed args by upstream's names, for binding a guard (op_rules.h's names).
class ArgSlots {
 public:
  /// `rules` describe the node's packing (rules.packed_args == args.size()); `node_args` are
  /// the graph's form of `args`, which tells constants from per-run values.
  ArgSlots(const OpRules& rules, const ArgRefs& node_args, const std::vector<c10::IValue>& args)
      : rules_(rules), node_args_(node_args), args_(args) {}

  /// The slot of the arg named `name`. Throws Error when the op packs none: the guard table
  /// and the installed torch disagree, a bug here rather than in the graph.
  Slot operator[](const char* name) const;
  /// The slot of an int list named `name`, its values converted when the graph holds them.
  IntsSlot ints(const char* name) const;

 private:
  const OpRules& rules_;
  ArgRefs node_args_;
  const std::vector<c10::IValue>& args_;
};

/// The run-time guards bound to one functional node. Empty (`!*this`) for ops that have none.
class CallCheck {
 public:
  CallCheck() = default;
  CallCheck(const char* op, std::vector<RunGuard> guards)
      : bound_(guards.empty() ? nullptr
                              : std::make_unique<const Bound>(Bound{op, std::move(guards)})) {}

  explicit operator bool() const { return bound_ != nullptr; }
  /// Throws ExecutionError when `grads` and `args` (filled for this run) break a guard.
  void operator()(const std::vector<at::Tensor>& grads, const std::vector<c10::IValue>& args) const;

 private:
  struct Bound {
    const char* op;
    std::vector<RunGuard> guards;
  };
  // Boxed: a plan keeps one per call step and most ops have no run-time guard.
  std::unique_ptr<const Bound> bound_;
};

}  // namespace ca::detail
