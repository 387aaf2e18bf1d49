// SPDX-License-Identifier: BSD-3-Clause
#include "guards/call_checks.h"

#include <ATen/ATen.h>

#include <cstring>

#include "ca/error.h"
#include "ca/version.h"

namespace ca::detail {
namespace {

// Values of an int list or a tensor of ints; nullopt (with `why`) when `v` is neither.
std::optional<std::vector<int64_t>> int_values(const c10::IValue& v, std::string& why) {
  if (v.isTensor()) {
    // torch reads only the elements (a 0-d length for an unbatched call is one).
    const at::Tensor t = v.toTensor().to(at::kCPU, at::kLong).reshape({-1}).contiguous();
    return std::vector<int64_t>(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel());
  }
  if (!v.isList()) {
    why = std::string("expected a list of ints, got ") + v.tagKind();
    return std::nullopt;
  }
  std::vector<int64_t> out;
  for (const c10::IValue& item : v.toListRef()) {
    if (!item.isInt()) {
      why = std::string("expected ints, found ") + item.tagKind();
      return std::nullopt;
    }
    out.push_back(item.toInt());
  }
  return out;
}

}  // namespace

Slot ArgSlots::operator[](const char* name) const {
  for (size_t j = 0; j < rules_.names.size(); ++j) {
    if (std::strcmp(rules_.names[j], name) == 0) return Slot{static_cast<uint32_t>(j), name};
  }
  throw Error(std::string("guard table: ") + rules_.op + " packs no arg named " + name +
              " in torch " + runtime_torch_version() + " (a ca-replay bug, not the graph's)");
}

IntsSlot ArgSlots::ints(const char* name) const {
  IntsSlot s{(*this)[name], std::nullopt};
  // A list with references (symbolic sizes, a tensor) is filled per run: converted per call.
  if (!has_refs(node_args_.at(s.slot.pos))) {
    std::string why;
    s.constant = int_values(args_[s.slot.pos], why);  // a malformed one fails on each call
  }
  return s;
}

void CallCheck::operator()(const std::vector<at::Tensor>& grads,
                           const std::vector<c10::IValue>& args) const {
  if (!bound_) return;
  const CallView view(bound_->op, grads, args);
  for (const RunGuard& guard : bound_->guards) guard(view);
}

const at::Tensor& CallView::grad(size_t k) const {
  static const at::Tensor kUndefined;
  return k < grads_.size() ? grads_[k] : kUndefined;
}

const at::Tensor& CallView::tensor(Slot s) const {
  static const at::Tensor kUndefined;
  const c10::IValue& v = arg(s);
  return v.isTensor() ? v.toTensor() : kUndefined;
}

int64_t CallView::integer(Slot s) const {
  const c10::IValue& v = arg(s);
  if (!v.isInt()) fail(s, std::string("expected an int, got ") + v.tagKind());
  return v.toInt();
}

IntList CallView::ints(const IntsSlot& s) const {
  if (s.constant) return IntList(&*s.constant);
  std::string why;
  std::optional<std::vector<int64_t>> values = int_values(arg(s.slot), why);
  if (!values) fail(s.slot, why);
  return IntList(std::move(*values));
}

void CallView::fail(Slot s, const std::string& why) const {
  throw ExecutionError(std::string(op_) + ".args[" + std::to_string(s.pos) + "] (" + s.name +
                       "): " + why);
}

void CallView::fail_grad(size_t k, const std::string& why) const {
  throw ExecutionError(std::string(op_) + ": grads[" + std::to_string(k) + "] of shape " +
                       c10::str(grad(k).sizes()) + ": " + why);
}

}  // namespace ca::detail
