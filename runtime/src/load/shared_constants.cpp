// SPDX-License-Identifier: BSD-3-Clause
#include "load/shared_constants.h"

#include <cstdint>

#include "append_bytes.h"
#include "arg_convert.h"

namespace ca::detail {
namespace {

// Every field of every record of `arg`'s subtree, in pre-order; types by their interned address
// (equal types are one object of the pool). Strings are length-prefixed, so no field runs into
// the next.
void append_key(const ArgRef& arg, std::string& key) {
  const ArgPool& pool = *arg.pool();
  const uint32_t end = arg.index() + arg.extent();
  for (uint32_t k = arg.index(); k < end; ++k) {
    const ArgRef r = pool.ref(k);
    append_bytes(key, r.kind());
    append_bytes(key, r.extent());
    append_bytes(key, r.i());
    append_bytes(key, r.b());
    append_bytes(key, r.device_index());
    switch (r.kind()) {
      case Arg::Kind::kDouble:
        append_bytes(key, r.d());
        break;
      case Arg::Kind::kComplex:
        append_bytes(key, r.c());
        break;
      case Arg::Kind::kString:
        append_bytes(key, r.s().size());
        key += r.s();
        break;
      case Arg::Kind::kList:
      case Arg::Kind::kDict:
        append_bytes(key, reinterpret_cast<uintptr_t>(&r.type()));
        append_bytes(key, reinterpret_cast<uintptr_t>(&r.value_type()));
        append_bytes(key, r.items().size());
        break;
      case Arg::Kind::kTuple:
        append_bytes(key, r.items().size());
        break;
      default:
        break;
    }
  }
}

}  // namespace

c10::IValue SharedConstants::get(const ArgRef& arg) {
  if (!is_container(arg.kind()) || has_refs(arg)) return ivalue_from_constant_arg(arg);
  key_.clear();
  append_key(arg, key_);
  if (const auto it = made_.find(key_); it != made_.end()) return it->second;
  c10::IValue value = ivalue_from_constant_arg(arg);
  made_.emplace(key_, value);
  return value;
}

}  // namespace ca::detail
