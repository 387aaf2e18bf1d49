// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// How the parameters' gradients are packed for all-reduce: buckets in reverse parameter order,
// one dtype and device each, each a flat buffer of the gradients followed by one count per
// parameter (1 where this rank produced its gradient, 0 where it did not).

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ca::detail {

struct GradBucket {
  std::vector<size_t> params;       ///< indices into the parameter list, in bucket order
  std::vector<int64_t> offsets;     ///< where each parameter's gradient starts in `buffer`
  int64_t grad_elements = 0;        ///< gradient elements; the counts follow them
  size_t bytes = 0;                 ///< gradient bytes (the size the limits bound)
  at::Tensor buffer;                ///< grad_elements + params.size() elements
  std::vector<at::Tensor> tensors;  ///< {buffer}: what the process group's all-reduce takes
};

/// Lays out the buckets of `params` (those that require grad), in reverse order: a new bucket
/// starts at a dtype or device change or when the next gradient would pass the limit
/// (`first_bytes` for the first bucket, `bytes` after it). Allocates each buffer.
std::vector<GradBucket> layout_buckets(const std::vector<at::Tensor>& params, size_t first_bytes,
                                       size_t bytes);

}  // namespace ca::detail
