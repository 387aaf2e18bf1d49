// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file
/// Registering custom C++ autograd functions (`torch::autograd::Function<T>`) so that graphs
/// holding them can be captured and replayed: upstream binds their functional form under
/// `typeid(T).name()`. Capture refuses a custom function that is not registered.

#include <torch/csrc/autograd/custom_function.h>

#include <string>
#include <typeinfo>

namespace ca {

/// The op name a graph uses for custom function T.
template <class T>
std::string custom_function_name() {
  return typeid(T).name();
}

namespace detail {
/// Adds (or, before the registry is first used, queues) a custom function's functional form.
/// Returns false when `name` is already registered. Use register_function<T>() instead.
bool register_custom_function(const std::string& name, torch::autograd::functional_apply_t fn);
}  // namespace detail

/// Registers T's functional form (`CppNode_apply_functional_ivalue<T>`). Cheap and safe at
/// static-initialization time: it never runs the harvest. Returns false when the name was
/// already registered; the first registration stays.
template <class T>
bool register_function() {
  return detail::register_custom_function(custom_function_name<T>(),
                                          &torch::autograd::CppNode_apply_functional_ivalue<T>);
}

}  // namespace ca

#define CA_CONCAT_INNER(a, b) a##b
#define CA_CONCAT(a, b) CA_CONCAT_INNER(a, b)
/// Registers custom function T at static-initialization time, e.g.
/// `CA_REGISTER_FUNCTION(MyScale);` in the trainer's translation unit that defines MyScale.
#define CA_REGISTER_FUNCTION(T) \
  static const bool CA_CONCAT(ca_registered_function_, __LINE__) = ::ca::register_function<T>()
