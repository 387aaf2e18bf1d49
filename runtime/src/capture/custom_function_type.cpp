// SPDX-License-Identifier: BSD-3-Clause
#include "capture/custom_function_type.h"

#include <string>
#include <string_view>

#include "ca/op_registry.h"

namespace ca::detail {

bool is_unregistered_custom_function(const std::type_info& node_type) {
  constexpr std::string_view kPrefix = "N5torch8autograd7CppNodeI";
  constexpr std::string_view kSuffix = "EE";
  std::string_view name = node_type.name();
  if (!name.empty() && name.front() == '*') name.remove_prefix(1);  // GCC's mark of local types
  if (name.size() <= kPrefix.size() + kSuffix.size() || name.substr(0, kPrefix.size()) != kPrefix ||
      name.substr(name.size() - kSuffix.size()) != kSuffix) {
    return false;
  }
  const std::string inner(
      name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size()));
  const OpRegistry& registry = OpRegistry::global();
  return !registry.contains(inner) && !registry.contains("*" + inner);
}

}  // namespace ca::detail
