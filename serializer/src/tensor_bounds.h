// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Checks a tensor loaded from a .pt archive against the bytes its storage really has: torch's
// unpickler takes a storage's size from the pickle and a tensor's geometry from the pickle, and
// checks neither against the data record it read.

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <unordered_map>

namespace ca::detail {

/// The size of each data record read while unpickling, by the address of the buffer holding it
/// (the address the storage built on it points to).
using RecordSizes = std::unordered_map<const void*, size_t>;

/// Throws FormatError naming tensor `index` and the numbers when the tensor is not a dense CPU
/// tensor, its storage declares more bytes than its data record in `records` holds, or its
/// sizes, strides and storage offset reach outside its storage (negative ones included).
void check_tensor_bounds(const at::Tensor& tensor, size_t index, const RecordSizes& records);

}  // namespace ca::detail
