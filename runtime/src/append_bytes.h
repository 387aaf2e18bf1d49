// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Keys spelled as the bytes of their fields (load's memo and sharing keys).

#include <string>
#include <type_traits>

namespace ca::detail {

/// Appends the bytes of `v`, a trivially copyable value, to `key`.
template <class T>
void append_bytes(std::string& key, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>, "a key holds plain values");
  key.append(reinterpret_cast<const char*>(&v), sizeof v);
}

}  // namespace ca::detail
