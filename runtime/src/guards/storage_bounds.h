// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Whether a strided geometry stays inside a storage: the check that makes a view whose sizes,
// strides or offset came from a file safe to read. Overflow-safe; negative strides allowed.

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <c10/core/SymInt.h>

#include <cstdint>
#include <string>

namespace ca::detail {

/// Element count of `sizes` (torch multiplies them unchecked), or -1 when a size is negative or
/// the product overflows int64: the one overflow-checked product of the guards.
int64_t element_count(c10::IntArrayRef sizes);

/// Empty when every element of (sizes, strides, offset), in elements, lies in [0, extent); else
/// why not. Sizes must be >= 0, as many as strides, and their product must fit in int64.
std::string geometry_outside(c10::IntArrayRef sizes, c10::IntArrayRef strides, int64_t offset,
                             int64_t extent);

/// Element count a dense allocation of (sizes, strides) at offset 0 spans (new_empty_strided's),
/// or -1 when the geometry is malformed or overflows.
int64_t geometry_extent(c10::IntArrayRef sizes, c10::IntArrayRef strides);

/// Empty when `packed` is a packed TensorGeometry (sizes, strides, offset) that torch may use:
/// one stride per size, sizes >= 0, an element count and extent that fit int64, offset >= 0
/// (TensorGeometry indexes strides by the sizes' dims and multiplies the sizes unchecked).
std::string packed_geometry_problem(const c10::IValue& packed);

/// Empty when `t` (defined, strided) reads only inside its storage; else why not.
std::string tensor_outside_storage(const at::Tensor& t);

}  // namespace ca::detail
