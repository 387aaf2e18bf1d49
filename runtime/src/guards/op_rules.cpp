// SPDX-License-Identifier: BSD-3-Clause
#include "guards/op_rules.h"

#include <algorithm>
#include <cstring>

#include "ca/error.h"
#include "guards/storage_bounds.h"

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

// cat_tensors_backward reads shape[dim] of every input shape that is not the legacy empty [0].
void check_cat_shapes(const ListRule& r, const std::vector<c10::IValue>& args,
                      const std::string& at) {
  const int64_t dim = args[r.b].isInt() ? args[r.b].toInt() : 0;
  int64_t rank = -1;
  for (const c10::IValue& shape : args[r.a].toListRef()) {
    const auto dims = shape.isList() ? shape.toListRef() : c10::ArrayRef<c10::IValue>();
    if (dims.size() == 1 && dims[0].isInt() && dims[0].toInt() == 0) continue;
    const auto r_i = static_cast<int64_t>(dims.size());
    if ((rank >= 0 && r_i != rank) || r_i == 0 || dim < -r_i || dim >= r_i) {
      throw FormatError(arg_at(at, r) + ": input shapes of rank " + std::to_string(r_i) +
                        (rank >= 0 ? " and " + std::to_string(rank) : std::string()) +
                        " for cat dim " + std::to_string(dim));
    }
    rank = r_i;
  }
}

// Saved sizes of a forward tensor: the backward allocates from them (zeros(self_sym_sizes),
// a geometry's storage), so each describes at most `limit` elements, as any tensor a step makes.
std::string sizes_problem(const c10::IValue& v, int64_t limit) {
  if (v.isNone()) return "";
  if (!v.isList()) return std::string("expected a list of sizes, got ") + v.tagKind();
  std::vector<int64_t> sizes;  // a SymInt[] (symbolic sizes read as 0) is a generic list
  for (const c10::IValue& s : v.toListRef()) {
    if (!s.isInt() || s.toInt() < 0) return "sizes " + c10::str(v) + " are not a shape";
    sizes.push_back(s.toInt());
  }
  const int64_t numel = element_count(sizes);
  if (numel < 0 || numel > limit) {  // < 0: the product overflows
    return "sizes " + c10::str(v) + " describe more than " + std::to_string(limit) +
           " elements (ExecutorOptions::max_tensor_elements)";
  }
  return "";
}

std::string geometry_problem(const c10::IValue& g, int64_t limit) {
  std::string why = packed_geometry_problem(g);
  if (!why.empty()) return why;
  const auto& parts = g.toTupleRef().elements();
  const int64_t extent = geometry_extent(parts[0].toIntVector(), parts[1].toIntVector());
  if (extent <= limit) return "";
  return "a geometry spanning " + std::to_string(extent) + " elements, more than " +
         std::to_string(limit) + " (ExecutorOptions::max_tensor_elements)";
}

void check_sizes(const ListRule& r, const c10::IValue& a, int64_t limit, const std::string& at) {
  std::string why;
  if (r.kind == ListRule::kTensorSizes) {
    why = sizes_problem(a, limit);
  } else if (r.kind == ListRule::kTensorSizesList) {
    if (!a.isList()) why = "expected a list of shapes";
    for (size_t k = 0; why.empty() && a.isList() && k < a.toListRef().size(); ++k) {
      why = sizes_problem(a.toListRef()[k], limit);
      if (!why.empty()) why.insert(0, "element " + std::to_string(k) + ": ");
    }
  } else if (r.kind == ListRule::kTensorSize) {
    if (!a.isInt() || a.toInt() < 0 || a.toInt() > limit) {
      why = c10::str(a) + " is not a size in [0, " + std::to_string(limit) + "]";
    }
  } else {
    why = geometry_problem(a, limit);
  }
  if (!why.empty()) throw FormatError(arg_at(at, r) + ": " + why);
}

void check_rule(const ListRule& r, const std::vector<c10::IValue>& args, size_t grads,
                size_t outputs, int64_t max_elements, const std::string& at) {
  const c10::IValue& a = args[r.a];
  if (r.kind == ListRule::kTensorSizes || r.kind == ListRule::kTensorSizesList ||
      r.kind == ListRule::kTensorSize || r.kind == ListRule::kGeometry) {
    return check_sizes(r, a, max_elements, at);
  }
  if (r.kind == ListRule::kPositive) {  // the op divides by it
    if (!a.isInt() || a.toInt() <= 0) {
      throw FormatError(arg_at(at, r) + ": " +
                        (a.isInt() ? std::to_string(a.toInt()) : a.tagKind()) +
                        ", expected an int > 0");
    }
    return;
  }
  if (r.kind == ListRule::kAtMostOutputs) {  // the op allocates one grad per list element
    const int64_t n = a.isInt() ? a.toInt() : -1;
    if (n < 0 || static_cast<uint64_t>(n) > outputs) {
      throw FormatError(arg_at(at, r) + ": a list of " + std::to_string(n) +
                        " tensors for a node with " + std::to_string(outputs) + " outputs");
    }
    return;
  }
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
                          std::to_string(r.b));
      }
      return;
    case ListRule::kMinLength:
      if (n < r.b) {
        throw FormatError(arg_at(at, r) + ": " + std::to_string(n) +
                          " elements, the op reads at least " + std::to_string(r.b));
      }
      return;
    case ListRule::kNotShorterThan:
      if (n < length_of(args[r.b])) {
        throw FormatError(arg_at(at, r) + ": " + std::to_string(n) + " elements for " +
                          std::to_string(length_of(args[r.b])) + " in args[" + std::to_string(r.b) +
                          "]; the op reads one per element of those");
      }
      return;
    case ListRule::kNonEmpty:
      if (n == 0) throw FormatError(arg_at(at, r) + ": empty, the op reads an element of it");
      return;
    case ListRule::kLengthIsArg: {
      const int64_t want = args[r.b].isInt() ? args[r.b].toInt() : -1;
      if (static_cast<int64_t>(n) != want) {
        throw FormatError(arg_at(at, r) + ": " + std::to_string(n) + " elements for a list of " +
                          std::to_string(want) + " tensors (args[" + std::to_string(r.b) + "])");
      }
      return;
    }
    case ListRule::kCatShapes:
      return check_cat_shapes(r, args, at);
    case ListRule::kAtMostOutputs:
    case ListRule::kPositive:
    case ListRule::kGeometry:
    case ListRule::kTensorSizes:
    case ListRule::kTensorSizesList:
    case ListRule::kTensorSize:
      return;  // checked above
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

void check_op_rules(const Node& node, const std::vector<c10::IValue>& args, const OpRules& rules,
                    const std::string& at, int64_t max_elements) {
  const size_t grads = node.inputs.size;
  if (grads < rules.min_grads) {
    throw FormatError(at + ": " + std::to_string(grads) + " grads, the op reads " +
                      std::to_string(rules.min_grads));
  }
  for (const ListRule& r : rules.rules) check_list_rule(r, node, args, at, max_elements);
}

void check_list_rule(const ListRule& rule, const Node& node, const std::vector<c10::IValue>& args,
                     const std::string& at, int64_t max_elements) {
  if (gate_open(rule.gate, args[0])) {
    check_rule(rule, args, node.inputs.size, node.outputs.size, max_elements, at);
  }
}

}  // namespace ca::detail
