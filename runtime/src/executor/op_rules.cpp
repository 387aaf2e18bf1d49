#include "executor/op_rules.h"

#include <algorithm>
#include <cstring>

#include "ca/error.h"

namespace ca::detail {
namespace {

size_t length_of(const c10::IValue& v) { return v.isList() ? v.toListRef().size() : 0; }

// Whether the formula behind a rule runs: one of its needs_input_grad flags (args[0]) is set.
bool gate_open(uint32_t gate, const c10::IValue& flags) {
  if (gate == 0 || !flags.isBoolList()) return true;
  const auto list = flags.toBoolList();
  for (size_t i = 0; i < list.size() && i < 32; ++i) {
    if (((gate >> i) & 1u) != 0 && list.get(i)) return true;
  }
  return false;
}

std::string arg_at(const std::string& at, const ListRule& r) {
  return at + ".args[" + std::to_string(r.a) + "] (" + r.name + ")";
}

void check_rule(const ListRule& r, const std::vector<c10::IValue>& args, size_t grads,
                const std::string& at) {
  const c10::IValue& a = args[r.a];
  if (!a.isList()) throw FormatError(arg_at(at, r) + ": expected a list, got " + a.tagKind());
  const size_t n = length_of(a);
  switch (r.kind) {
    case ListRule::kSameLength:
      if (n != length_of(args[r.b])) {
        throw FormatError(arg_at(at, r) + ": " + std::to_string(n) + " sizes but " +
                          std::to_string(length_of(args[r.b])) + " strides (args[" +
                          std::to_string(r.b) + "]); they describe one tensor");
      }
      return;
    case ListRule::kLength:
      if (n != r.b) {
        throw FormatError(arg_at(at, r) + ": " + std::to_string(n) + " elements, the op reads " +
                          std::to_string(r.b) + " (a matrix)");
      }
      return;
    case ListRule::kNonEmpty:
      if (n == 0) throw FormatError(arg_at(at, r) + ": empty, the op indexes it by a dim");
      return;
    case ListRule::kCoversGrads:
      if (n < grads) {
        throw FormatError(arg_at(at, r) + ": " + std::to_string(n) + " elements for " +
                          std::to_string(grads) + " grads, the op reads one per grad");
      }
      return;
  }
}

}  // namespace

const OpRules* find_op_rules(const std::string& op) {
  const auto& table = generated_op_rules();
  auto it = std::lower_bound(table.begin(), table.end(), op,
                             [](const OpRules& r, const std::string& name) {
                               return std::strcmp(r.op, name.c_str()) < 0;
                             });
  return it != table.end() && op == it->op ? &*it : nullptr;
}

void check_op_rules(const Node& node, const std::vector<c10::IValue>& args, const std::string& at) {
  const OpRules* rules = find_op_rules(node.op.str());
  // A table made for another packing (a torch whose op differs) says nothing about this one.
  if (rules == nullptr || rules->packed_args != args.size()) return;
  const size_t grads = node.inputs.size();
  if (grads < rules->min_grads) {
    throw FormatError(at + ": " + std::to_string(grads) + " grads, the op reads " +
                      std::to_string(rules->min_grads));
  }
  for (const ListRule& r : rules->rules) {
    if (gate_open(r.gate, args[0])) check_rule(r, args, grads, at);
  }
}

}  // namespace ca::detail
