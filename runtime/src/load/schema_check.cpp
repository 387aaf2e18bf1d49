// SPDX-License-Identifier: BSD-3-Clause
#include "load/schema_check.h"

#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>

namespace ca::detail {
namespace {

using c10::TypeKind;

bool is_int_like(TypeKind k) {
  return k == TypeKind::IntType || k == TypeKind::SymIntType || k == TypeKind::LayoutType ||
         k == TypeKind::ScalarTypeType || k == TypeKind::MemoryFormatType;
}

// Ints that stand for c10 enums are cast without a check where they are unpacked: one out of
// range indexes past torch's tables.
std::string int_like_mismatch(TypeKind k, const c10::TypePtr& schema, const c10::IValue& value) {
  if (!value.isInt()) return "expected " + schema->str() + ", got " + value.tagKind();
  int64_t count = INT64_MAX;
  if (k == TypeKind::ScalarTypeType) count = static_cast<int64_t>(c10::ScalarType::Undefined);
  if (k == TypeKind::LayoutType) count = static_cast<int64_t>(c10::Layout::NumOptions);
  if (k == TypeKind::MemoryFormatType) count = static_cast<int64_t>(c10::MemoryFormat::NumOptions);
  const int64_t v = value.toInt();
  if (v >= 0 && v < count) return "";
  return schema->str() + " " + std::to_string(v) + " out of range [0, " + std::to_string(count) +
         ")";
}

std::string expected(const c10::TypePtr& schema, const c10::IValue& value) {
  return "expected " + schema->str() + ", got " + value.tagKind();
}

// A list typed `have` where the schema wants elements of `want`: the same or a subtype, with
// ints standing for SymInt and c10 enums, doubles for SymFloat.
bool element_fits(const c10::TypePtr& have, const c10::TypePtr& want) {
  const TypeKind h = have->kind(), w = want->kind();
  if (is_int_like(w)) return h == TypeKind::IntType || h == TypeKind::SymIntType || h == w;
  if (w == TypeKind::FloatType || w == TypeKind::SymFloatType) {
    return h == TypeKind::FloatType || h == TypeKind::SymFloatType;
  }
  if (w == TypeKind::OptionalType) {
    if (h == TypeKind::NoneType) return true;
    const c10::TypePtr& inner = h == TypeKind::OptionalType ? have->containedTypes()[0] : have;
    return element_fits(inner, want->containedTypes()[0]);
  }
  if ((w == TypeKind::ListType && h == TypeKind::ListType) ||
      (w == TypeKind::TupleType && h == TypeKind::TupleType)) {
    const auto hs = have->containedTypes(), ws = want->containedTypes();
    if (hs.size() != ws.size()) return false;
    for (size_t i = 0; i < hs.size(); ++i) {
      if (!element_fits(hs[i], ws[i])) return false;
    }
    return true;
  }
  return have->isSubtypeOf(*want);
}

std::string check_items(const std::vector<c10::IValue>& items,
                        const std::vector<c10::TypePtr>& types) {
  for (size_t i = 0; i < items.size(); ++i) {
    std::string why = schema_mismatch(items[i], types[i]);
    if (!why.empty()) return "[" + std::to_string(i) + "]: " + why;
  }
  return "";
}

}  // namespace

std::string schema_mismatch(const c10::IValue& value, const c10::TypePtr& schema) {
  const TypeKind k = schema->kind();
  switch (k) {
    case TypeKind::AnyType:
      return "";
    case TypeKind::OptionalType:
      return value.isNone() ? "" : schema_mismatch(value, schema->containedTypes()[0]);
    case TypeKind::TensorType:
      return value.isTensor() ? "" : expected(schema, value);
    case TypeKind::BoolType:
      return value.isBool() ? "" : expected(schema, value);
    case TypeKind::FloatType:
    case TypeKind::SymFloatType:
      return value.isDouble() ? "" : expected(schema, value);
    case TypeKind::StringType:
      return value.isString() ? "" : expected(schema, value);
    case TypeKind::DeviceObjType:
      return value.isDevice() ? "" : expected(schema, value);
    case TypeKind::NumberType:
      return value.isInt() || value.isDouble() || value.isBool() || value.isComplexDouble()
                 ? ""
                 : expected(schema, value);
    case TypeKind::ListType: {
      if (!value.isList()) return expected(schema, value);
      // Unpacking asserts a list's own element type (isIntList()...), not just its items'.
      const c10::TypePtr have = value.toList().elementType();
      if (!element_fits(have, schema->containedTypes()[0])) {
        return "expected " + schema->str() + ", got a list of " + have->str();
      }
      const auto list = value.toListRef();
      std::vector<c10::IValue> items(list.begin(), list.end());
      return check_items(items,
                         std::vector<c10::TypePtr>(items.size(), schema->containedTypes()[0]));
    }
    case TypeKind::TupleType: {
      if (!value.isTuple()) return expected(schema, value);
      const auto& elems = value.toTupleRef().elements();
      const auto types = schema->containedTypes();
      if (elems.size() != types.size()) {
        return "expected a tuple of " + std::to_string(types.size()) + ", got " +
               std::to_string(elems.size()) + " elements";
      }
      return check_items(std::vector<c10::IValue>(elems.begin(), elems.end()), types.vec());
    }
    default:
      if (k == TypeKind::IntType || k == TypeKind::SymIntType) {
        return value.isInt() ? "" : expected(schema, value);
      }
      if (is_int_like(k)) return int_like_mismatch(k, schema, value);
      return value.type()->isSubtypeOf(*schema) ? "" : expected(schema, value);
  }
}

}  // namespace ca::detail
