// SPDX-License-Identifier: BSD-3-Clause
#include "guards/guard_table.h"

#include <algorithm>
#include <cstring>

namespace ca::detail {
namespace {

// The row's positions in this node's packing.
ListRule resolve(const NamedListRule& r, const ArgSlots& slots) {
  const Slot a = slots[r.a];
  const auto b = r.b != nullptr ? static_cast<uint16_t>(slots[r.b].pos) : r.n;
  return ListRule{r.kind, static_cast<uint16_t>(a.pos), b, r.gate, r.a};
}

struct ByOp {
  bool operator()(const GuardRow& r, const char* op) const { return std::strcmp(r.op, op) < 0; }
  bool operator()(const char* op, const GuardRow& r) const { return std::strcmp(op, r.op) < 0; }
};

}  // namespace

CallCheck bind_guards(const Node& node, const std::string& op, const ArgRefs& node_args,
                      const std::vector<c10::IValue>& args, const std::string& at,
                      int64_t max_elements) {
  const OpRules* rules = find_op_rules(op);
  // A table made for another packing (a torch whose op differs) says nothing about this one.
  if (rules == nullptr || rules->packed_args != args.size()) return {};
  check_op_rules(node, args, *rules, at, max_elements);

  const auto& rows = guard_rows();
  const auto [first, last] = std::equal_range(rows.begin(), rows.end(), op.c_str(), ByOp());
  const ArgSlots slots(*rules, node_args, args);
  std::vector<RunGuard> run;
  for (auto row = first; row != last; ++row) {
    if (const auto* list = std::get_if<NamedListRule>(&row->rule)) {
      check_list_rule(resolve(*list, slots), node, args, at, max_elements);
    } else {
      run.push_back(std::get<RunGuardFactory>(row->rule)(slots));
    }
  }
  return run.empty() ? CallCheck() : CallCheck(rules->op, std::move(run));
}

}  // namespace ca::detail
