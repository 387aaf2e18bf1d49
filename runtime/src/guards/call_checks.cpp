// SPDX-License-Identifier: BSD-3-Clause
#include "guards/call_checks.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>

#include "ca/error.h"

namespace ca::detail {

CallCheck CallCheck::find(const std::string& op, size_t packed_args) {
  const auto& table = call_check_table();
  auto it = std::lower_bound(table.begin(), table.end(), op,
                             [](const CallCheckEntry& e, const std::string& name) {
                               return std::strcmp(e.op, name.c_str()) < 0;
                             });
  if (it == table.end() || op != it->op) return {};
  const OpRules* rules = find_op_rules(op);
  // Names are looked up by position in upstream's packing: only for the packing they describe.
  if (rules == nullptr || rules->packed_args != packed_args) return {};
  return CallCheck(it->fn, rules);
}

void CallCheck::operator()(const std::vector<at::Tensor>& grads,
                           const std::vector<c10::IValue>& args) const {
  fn_(CallView(*rules_, grads, args));
}

const at::Tensor& CallView::grad(size_t k) const {
  static const at::Tensor kUndefined;
  return k < grads_.size() ? grads_[k] : kUndefined;
}

size_t CallView::position(const char* name) const {
  for (size_t j = 0; j < rules_.names.size(); ++j) {
    if (std::strcmp(rules_.names[j], name) == 0) return j;
  }
  // The table and the checks come from one torch: a miss is a bug here, not in the graph.
  throw ExecutionError(std::string(rules_.op) + ": the call check reads an arg named " + name +
                       " that the op does not pack");
}

const c10::IValue& CallView::arg(const char* name) const { return args_.at(position(name)); }

const at::Tensor& CallView::tensor(const char* name) const {
  static const at::Tensor kUndefined;
  const c10::IValue& v = arg(name);
  return v.isTensor() ? v.toTensor() : kUndefined;
}

int64_t CallView::integer(const char* name) const {
  const c10::IValue& v = arg(name);
  if (!v.isInt()) fail(name, std::string("expected an int, got ") + v.tagKind());
  return v.toInt();
}

std::vector<int64_t> CallView::ints(const char* name) const {
  const c10::IValue& v = arg(name);
  if (v.isTensor()) {
    // torch reads only the elements (a 0-d length for an unbatched call is one).
    const at::Tensor t = v.toTensor().to(at::kCPU, at::kLong).reshape({-1}).contiguous();
    return std::vector<int64_t>(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel());
  }
  std::vector<int64_t> out;
  if (!v.isList()) fail(name, std::string("expected a list of ints, got ") + v.tagKind());
  for (const c10::IValue& item : v.toListRef()) {
    if (!item.isInt()) fail(name, std::string("expected ints, found ") + item.tagKind());
    out.push_back(item.toInt());
  }
  return out;
}

void CallView::fail(const char* name, const std::string& why) const {
  throw ExecutionError(std::string(rules_.op) + ".args[" + std::to_string(position(name)) + "] (" +
                       name + "): " + why);
}

void CallView::fail_grad(size_t k, const std::string& why) const {
  throw ExecutionError(std::string(rules_.op) + ": grads[" + std::to_string(k) + "] of shape " +
                       c10::str(grad(k).sizes()) + ": " + why);
}

}  // namespace ca::detail
