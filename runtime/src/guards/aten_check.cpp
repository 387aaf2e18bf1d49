// SPDX-License-Identifier: BSD-3-Clause
#include "guards/aten_check.h"

#include <array>

#include "ca/error.h"
#include "guards/storage_bounds.h"
#include "load/schema_check.h"

namespace ca::detail {
namespace {

// Ops whose kernels set sizes and strides from their args with no bounds check at all.
constexpr std::array<const char*, 2> kUncheckedGeometry = {"aten::_reshape_alias",
                                                           "aten::_reshape_alias_copy"};

std::string name_of(const c10::FunctionSchema& s) {
  return s.name() + (s.overload_name().empty() ? "" : "." + s.overload_name());
}

bool is_plain_tensor(const c10::TypePtr& t) { return t->kind() == c10::TypeKind::TensorType; }

void check_arg(const c10::Argument& formal, const c10::IValue& value, const std::string& at) {
  if (formal.alias_info() != nullptr && formal.alias_info()->isWrite()) {
    throw FormatError(at + " (" + formal.name() + "): the op writes into this argument; a " +
                      "replay never writes into its inputs");
  }
  // real_type: the schema parser shows ScalarType, Layout and MemoryFormat as int.
  std::string why = schema_mismatch(value, formal.real_type());
  if (!why.empty()) throw FormatError(at + " (" + formal.name() + "): " + why);
}

}  // namespace

void check_aten_node(const Node& node, const c10::FunctionSchema& schema,
                     const std::vector<c10::IValue>& args, const std::string& at) {
  const std::string op = name_of(schema);
  for (const char* unchecked : kUncheckedGeometry) {
    if (schema.name() == unchecked) {
      throw FormatError(at + ": " + op + " sets a view's geometry without a bounds check; " +
                        "a graph must use aten::view or aten::as_strided");
    }
  }
  if (schema.is_vararg() || schema.is_varret()) {
    throw FormatError(at + ": " + op + " takes or returns a variable number of values");
  }
  const auto& formals = schema.arguments();
  if (args.size() != formals.size()) {
    throw FormatError(at + ": " + std::to_string(args.size()) + " args, " + op + " takes " +
                      std::to_string(formals.size()) + " (a boxed call passes defaults too)");
  }
  for (size_t j = 0; j < args.size(); ++j) {
    check_arg(formals[j], args[j], at + ".args[" + std::to_string(j) + "]");
  }
  if (node.outputs.size != schema.returns().size()) {
    throw FormatError(at + ": " + std::to_string(node.outputs.size) + " outputs, " + op +
                      " returns " + std::to_string(schema.returns().size()));
  }
}

void check_aten_inputs(const c10::FunctionSchema& schema, const torch::jit::Stack& stack) {
  const auto& formals = schema.arguments();
  for (size_t j = 0; j < formals.size() && j < stack.size(); ++j) {
    if (is_plain_tensor(formals[j].type()) && !stack[j].toTensor().defined()) {
      throw ExecutionError("args[" + std::to_string(j) + "] (" + formals[j].name() + ") of " +
                           name_of(schema) + " is an undefined tensor");
    }
  }
}

void check_aten_results(const c10::FunctionSchema& schema, const torch::jit::Stack& results) {
  const auto& returns = schema.returns();
  for (size_t k = 0; k < returns.size() && k < results.size(); ++k) {
    if (returns[k].alias_info() == nullptr) continue;
    auto check = [&](const c10::IValue& v) {
      if (!v.isTensor()) return;
      std::string why = tensor_outside_storage(v.toTensor());
      if (!why.empty()) {
        throw ExecutionError("result " + std::to_string(k) + " of " + name_of(schema) +
                             " is a view outside its storage: " + why);
      }
    };
    if (results[k].isList()) {
      for (const c10::IValue& item : results[k].toListRef()) check(item);
    } else {
      check(results[k]);
    }
  }
}

}  // namespace ca::detail
