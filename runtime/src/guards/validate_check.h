// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// When torch::autograd::validate_outputs leaves a gradient untouched. Upstream (engine.cpp,
// validate_outputs_impl) skips absent metadata and undefined grads, then reduces a grad whose
// shape differs, checks real/complex agreement, casts to grad_dtype when it is set and differs,
// refuses another layout, moves or refuses another device, and asserts a differentiable dtype.
// A grad that passes every test below goes through all of that unchanged, so skipping the call
// is exactly equivalent; anything else is handed to torch.

#include <c10/core/ScalarType.h>
#include <torch/csrc/autograd/input_metadata.h>
#include <torch/csrc/autograd/variable.h>

namespace ca::detail {

/// True when validate_outputs with `md` returns a grad with these properties unchanged.
inline bool metadata_accepts(const torch::autograd::InputMetadata& md, c10::ScalarType dtype,
                             c10::SymIntArrayRef sizes, c10::Layout layout, c10::Device device,
                             bool nested) {
  if (nested || md.is_nested_tensor() || md.is_cpp_nested_tensor()) return false;
  if (layout != md.layout() || device != md.device()) return false;
  if (md.grad_dtype().has_value() && *md.grad_dtype() != dtype) return false;
  const bool md_complex = c10::isComplexType(c10::typeMetaToScalarType(md.options().dtype()));
  if (!c10::isFloatingType(dtype) && md_complex != c10::isComplexType(dtype)) return false;
  if (!torch::autograd::isDifferentiableType(dtype)) return false;
  return sizes.equals(md.shape_as_dim_vector());
}

/// metadata_accepts for a live gradient.
inline bool metadata_accepts(const torch::autograd::InputMetadata& md, const at::Tensor& grad) {
  return metadata_accepts(md, grad.scalar_type(), grad.sym_sizes(), grad.layout(), grad.device(),
                          grad.is_nested());
}

}  // namespace ca::detail
