#pragma once
/// @file
/// Registering custom C++ autograd functions (`torch::autograd::Function<T>`) so that graphs
/// holding them can be replayed: upstream binds their functional form under `typeid(T).name()`.

#include <torch/csrc/autograd/custom_function.h>

#include <typeinfo>

#include "ca/op_registry.h"

namespace ca {

/// The op name a graph uses for custom function T.
template <class T>
std::string custom_function_name() {
  return typeid(T).name();
}

/// Adds T's functional form (`CppNode_apply_functional_ivalue<T>`) to the registry. Returns
/// false when the name was already registered (by an earlier call or by a capture).
template <class T>
bool register_function() {
  return OpRegistry::global().add({custom_function_name<T>(),
                                   &torch::autograd::CppNode_apply_functional_ivalue<T>,
                                   {},
                                   /*is_custom_function=*/true});
}

}  // namespace ca

#define CA_CONCAT_INNER(a, b) a##b
#define CA_CONCAT(a, b) CA_CONCAT_INNER(a, b)
/// Registers custom function T at static-initialization time, e.g.
/// `CA_REGISTER_FUNCTION(MyScale);` in the trainer's translation unit that defines MyScale.
#define CA_REGISTER_FUNCTION(T) \
  static const bool CA_CONCAT(ca_registered_function_, __LINE__) = ::ca::register_function<T>()
