// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Which custom functions (torch::autograd::CppNode<T>) a replay cannot hold: those whose T is not
// registered (CA_REGISTER_FUNCTION), so that no functional form of T's backward exists here.

#include <typeinfo>

namespace ca::detail {

/// Whether `node_type` is CppNode<T> for a T the op registry does not hold. Read from the
/// mangled name (Itanium C++ ABI: CppNode<T> is "N5torch8autograd7CppNodeI" + typeid(T).name() +
/// "EE"); a name it cannot split (T's own name abbreviated against torch's namespaces) counts as
/// registered, and capture then refuses the function by name as before.
bool is_unregistered_custom_function(const std::type_info& node_type);

}  // namespace ca::detail
