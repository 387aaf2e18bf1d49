#include "executor/schema_check.h"

namespace ca::detail {
namespace {

using c10::TypeKind;

bool is_int_like(TypeKind k) {
  return k == TypeKind::IntType || k == TypeKind::SymIntType || k == TypeKind::LayoutType ||
         k == TypeKind::ScalarTypeType || k == TypeKind::MemoryFormatType;
}

std::string expected(const c10::TypePtr& schema, const c10::IValue& value) {
  return "expected " + schema->str() + ", got " + value.tagKind();
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
      if (is_int_like(k)) return value.isInt() ? "" : expected(schema, value);
      return value.type()->isSubtypeOf(*schema) ? "" : expected(schema, value);
  }
}

}  // namespace ca::detail
