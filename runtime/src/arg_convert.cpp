// SPDX-License-Identifier: BSD-3-Clause
#include "arg_convert.h"

#include <ATen/core/Dict.h>
#include <ATen/core/List.h>

#include "ca/error.h"

namespace ca::detail {
namespace {

using K = ArgType::Kind;

struct KindName {
  c10::TypeKind c10_kind;
  K kind;
};

// Leaf types, both ways.
constexpr KindName kLeaves[] = {
    {c10::TypeKind::AnyType, K::kAny},
    {c10::TypeKind::NoneType, K::kNone},
    {c10::TypeKind::BoolType, K::kBool},
    {c10::TypeKind::IntType, K::kInt},
    {c10::TypeKind::FloatType, K::kFloat},
    {c10::TypeKind::ComplexType, K::kComplex},
    {c10::TypeKind::StringType, K::kString},
    {c10::TypeKind::TensorType, K::kTensor},
    {c10::TypeKind::SymIntType, K::kSymInt},
    {c10::TypeKind::SymFloatType, K::kSymFloat},
    {c10::TypeKind::NumberType, K::kNumber},
    {c10::TypeKind::LayoutType, K::kLayout},
    {c10::TypeKind::DeviceObjType, K::kDevice},
    {c10::TypeKind::ScalarTypeType, K::kScalarType},
    {c10::TypeKind::MemoryFormatType, K::kMemoryFormat},
};

c10::TypePtr leaf_type(K kind) {
  switch (kind) {
    case K::kAny:
      return c10::AnyType::get();
    case K::kNone:
      return c10::NoneType::get();
    case K::kBool:
      return c10::BoolType::get();
    case K::kInt:
      return c10::IntType::get();
    case K::kFloat:
      return c10::FloatType::get();
    case K::kComplex:
      return c10::ComplexType::get();
    case K::kString:
      return c10::StringType::get();
    case K::kTensor:
      return c10::TensorType::get();
    case K::kSymInt:
      return c10::SymIntType::get();
    case K::kSymFloat:
      return c10::SymFloatType::get();
    case K::kNumber:
      return c10::NumberType::get();
    case K::kLayout:
      return c10::LayoutType::get();
    case K::kDevice:
      return c10::DeviceObjType::get();
    case K::kScalarType:
      return c10::ScalarTypeType::get();
    case K::kMemoryFormat:
      return c10::MemoryFormatType::get();
    default:
      return nullptr;
  }
}

// The schema type with Optional[...] peeled off, or null.
c10::TypePtr unwrap_optional(const c10::TypePtr& t) {
  if (t && t->kind() == c10::TypeKind::OptionalType) {
    return t->expectRef<c10::OptionalType>().getElementType();
  }
  return t;
}

c10::TypePtr contained_or_null(const c10::TypePtr& t, size_t i) {
  if (!t) return nullptr;
  auto sub = t->containedTypes();
  return i < sub.size() ? sub[i] : nullptr;
}

Arg int_arg(const c10::IValue& v, const c10::TypePtr& declared) {
  Arg::Kind kind = Arg::Kind::kInt;
  if (declared) {
    switch (declared->kind()) {
      case c10::TypeKind::LayoutType:
        kind = Arg::Kind::kLayout;
        break;
      case c10::TypeKind::ScalarTypeType:
        kind = Arg::Kind::kScalarType;
        break;
      case c10::TypeKind::MemoryFormatType:
        kind = Arg::Kind::kMemoryFormat;
        break;
      default:
        break;
    }
  }
  return Arg::integer(v.toInt(), kind);
}

}  // namespace

ArgType arg_type_of(const c10::TypePtr& type, const std::string& where) {
  for (const KindName& leaf : kLeaves) {
    if (type->kind() == leaf.c10_kind) return ArgType{leaf.kind, {}};
  }
  ArgType out;
  switch (type->kind()) {
    case c10::TypeKind::OptionalType:
      out.kind = K::kOptional;
      break;
    case c10::TypeKind::ListType:
      out.kind = K::kList;
      break;
    case c10::TypeKind::TupleType:
      out.kind = K::kTuple;
      break;
    case c10::TypeKind::DictType:
      out.kind = K::kDict;
      break;
    default:
      throw CaptureError(where + ": type " + type->str() + " cannot be stored in a graph");
  }
  for (const c10::TypePtr& sub : type->containedTypes()) {
    out.contained.push_back(arg_type_of(sub, where));
  }
  return out;
}

c10::TypePtr type_ptr_of(const ArgType& type) {
  if (c10::TypePtr leaf = leaf_type(type.kind)) return leaf;
  std::vector<c10::TypePtr> sub;
  for (const ArgType& t : type.contained) sub.push_back(type_ptr_of(t));
  auto need = [&](size_t n) {
    if (sub.size() != n) throw FormatError("type needs " + std::to_string(n) + " contained types");
  };
  try {  // c10 itself refuses some combinations (throws c10::Error), e.g. unions it cannot form
    switch (type.kind) {
      case K::kOptional:
        need(1);
        return c10::OptionalType::create(sub[0]);
      case K::kList:
        need(1);
        return c10::ListType::create(sub[0]);
      case K::kTuple:
        return c10::TupleType::create(sub);
      case K::kDict:
        need(2);
        return c10::DictType::create(sub[0], sub[1]);
      default:
        throw FormatError("unknown type kind");
    }
  } catch (const c10::Error& e) {
    throw FormatError(std::string("not a valid type: ") + e.what_without_backtrace());
  }
}

Arg arg_from_ivalue(const c10::IValue& v, const c10::TypePtr& declared_in,
                    const TensorToValue& tensor_id, const std::string& where) {
  const c10::TypePtr declared = unwrap_optional(declared_in);
  if (v.isNone()) return Arg::none();
  if (v.isTensor()) return Arg::tensor(tensor_id(v.toTensor()));
  if (v.isBool()) return Arg::boolean(v.toBool());
  if (v.isInt()) return int_arg(v, declared);
  if (v.isDouble()) return Arg::real(v.toDouble());
  if (v.isComplexDouble()) {
    Arg a;
    a.kind = Arg::Kind::kComplex;
    a.c = v.toComplexDouble();
    return a;
  }
  if (v.isString()) return Arg::string(v.toStringRef());
  if (v.isDevice()) {
    Arg a = Arg::integer(static_cast<int64_t>(v.toDevice().type()), Arg::Kind::kDevice);
    a.device_index = v.toDevice().index();
    return a;
  }
  if (v.isList()) {
    c10::List<c10::IValue> list = v.toList();
    std::vector<Arg> items;
    items.reserve(list.size());
    const c10::TypePtr elem_declared = contained_or_null(declared, 0);
    for (size_t i = 0; i < list.size(); ++i) {
      items.push_back(arg_from_ivalue(list.get(i), elem_declared, tensor_id,
                                      where + "[" + std::to_string(i) + "]"));
    }
    return Arg::list(arg_type_of(list.elementType(), where), std::move(items));
  }
  if (v.isTuple()) {
    std::vector<Arg> items;
    const auto& elements = v.toTupleRef().elements();
    for (size_t i = 0; i < elements.size(); ++i) {
      items.push_back(arg_from_ivalue(elements[i], contained_or_null(declared, i), tensor_id,
                                      where + "." + std::to_string(i)));
    }
    return Arg::tuple(std::move(items));
  }
  if (v.isGenericDict()) {
    c10::Dict<c10::IValue, c10::IValue> dict = v.toGenericDict();
    Arg a;
    a.kind = Arg::Kind::kDict;
    a.type = arg_type_of(dict.keyType(), where);
    a.value_type = arg_type_of(dict.valueType(), where);
    for (const auto& entry : dict) {
      a.items.push_back(arg_from_ivalue(entry.key(), nullptr, tensor_id, where + ".key"));
      a.items.push_back(arg_from_ivalue(entry.value(), nullptr, tensor_id, where + ".value"));
    }
    return a;
  }
  throw CaptureError(where + ": packed value of kind " + v.tagKind() +
                     " cannot be stored in a graph");
}

Arg constant_arg_from_ivalue(const c10::IValue& value, const c10::TypePtr& declared,
                             const std::string& where) {
  auto refuse_tensors = [&](const at::Tensor& t) -> ValueId {
    if (t.defined()) throw CaptureError(where + ": unexpected tensor in constant state");
    return kNoValue;
  };
  return arg_from_ivalue(value, declared, refuse_tensors, where);
}

c10::IValue ivalue_from_arg(const ArgRef& a, const ValueToTensor& tensor_of,
                            const ValueToInt& int_of) {
  switch (a.kind()) {
    case Arg::Kind::kNone:
      return c10::IValue();
    case Arg::Kind::kBool:
      return c10::IValue(a.b());
    case Arg::Kind::kInt:
    case Arg::Kind::kLayout:
    case Arg::Kind::kScalarType:
    case Arg::Kind::kMemoryFormat:
      return c10::IValue(a.i());
    case Arg::Kind::kDouble:
      return c10::IValue(a.d());
    case Arg::Kind::kComplex:
      return c10::IValue(a.c());
    case Arg::Kind::kString:
      return c10::IValue(a.s());
    case Arg::Kind::kDevice:
      return c10::IValue(c10::Device(static_cast<c10::DeviceType>(a.i()), a.device_index()));
    case Arg::Kind::kTensor:
      return c10::IValue(a.ref() == kNoValue ? at::Tensor() : tensor_of(a.ref()));
    case Arg::Kind::kSymInt:
      return c10::IValue(int_of(a.ref()));
    case Arg::Kind::kList: {
      c10::impl::GenericList list(type_ptr_of(a.type()));
      const ArgRefs items = a.items();
      list.reserve(items.size());
      for (ArgRef item : items) list.push_back(ivalue_from_arg(item, tensor_of, int_of));
      return c10::IValue(list);
    }
    case Arg::Kind::kTuple: {
      std::vector<c10::IValue> items;
      items.reserve(a.items().size());
      for (ArgRef item : a.items()) items.push_back(ivalue_from_arg(item, tensor_of, int_of));
      return c10::IValue(c10::ivalue::Tuple::create(std::move(items)));
    }
    case Arg::Kind::kDict: {
      c10::impl::GenericDict dict(type_ptr_of(a.type()), type_ptr_of(a.value_type()));
      const ArgRefs items = a.items();
      for (auto it = items.begin(); it != items.end(); ++it) {
        c10::IValue key = ivalue_from_arg(*it, tensor_of, int_of);
        if (++it == items.end()) break;  // validate_graph refuses an odd count
        dict.insert(std::move(key), ivalue_from_arg(*it, tensor_of, int_of));
      }
      return c10::IValue(dict);
    }
  }
  throw FormatError("arg of unknown kind " + std::to_string(static_cast<int>(a.kind())));
}

c10::IValue ivalue_from_constant_arg(const ArgRef& arg) {
  return ivalue_from_arg(
      arg, [](ValueId) { return at::Tensor(); }, [](ValueId) { return int64_t{0}; });
}

}  // namespace ca::detail
