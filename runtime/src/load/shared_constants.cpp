// SPDX-License-Identifier: BSD-3-Clause
#include "load/shared_constants.h"

#include <cstdint>

#include "arg_convert.h"

namespace ca::detail {
namespace {

template <class T>
void put(std::string& key, const T& v) {
  key.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Every field of every record of `arg`'s subtree, in pre-order; types by their interned address
// (equal types are one object of the pool). Strings are length-prefixed, so no field runs into
// the next.
void append_key(const ArgRef& arg, std::string& key) {
  const ArgPool& pool = *arg.pool();
  const uint32_t end = arg.index() + arg.extent();
  for (uint32_t k = arg.index(); k < end; ++k) {
    const ArgRef r = pool.ref(k);
    put(key, r.kind());
    put(key, r.extent());
    put(key, r.i());
    put(key, r.b());
    put(key, r.device_index());
    switch (r.kind()) {
      case Arg::Kind::kDouble:
        put(key, r.d());
        break;
      case Arg::Kind::kComplex:
        put(key, r.c());
        break;
      case Arg::Kind::kString:
        put(key, r.s().size());
        key += r.s();
        break;
      case Arg::Kind::kList:
      case Arg::Kind::kDict:
        put(key, reinterpret_cast<uintptr_t>(&r.type()));
        put(key, reinterpret_cast<uintptr_t>(&r.value_type()));
        put(key, r.items().size());
        break;
      case Arg::Kind::kTuple:
        put(key, r.items().size());
        break;
      default:
        break;
    }
  }
}

at::Tensor no_tensor(ValueId) { return at::Tensor(); }
int64_t no_int(ValueId) { return 0; }

}  // namespace

c10::IValue SharedConstants::get(const ArgRef& arg) {
  if (!is_container(arg.kind()) || has_refs(arg)) return ivalue_from_arg(arg, no_tensor, no_int);
  key_.clear();
  append_key(arg, key_);
  if (const auto it = made_.find(key_); it != made_.end()) return it->second;
  c10::IValue value = ivalue_from_arg(arg, no_tensor, no_int);
  made_.emplace(key_, value);
  return value;
}

}  // namespace ca::detail
