// SPDX-License-Identifier: BSD-3-Clause
#include "distributed/grad_buckets.h"

#include <ATen/ATen.h>

namespace ca::detail {

std::vector<GradBucket> layout_buckets(const std::vector<at::Tensor>& params, size_t first_bytes,
                                       size_t bytes) {
  std::vector<GradBucket> buckets;
  const at::Tensor* last = nullptr;  // the previous parameter placed
  for (size_t k = params.size(); k-- > 0;) {
    const at::Tensor& p = params[k];
    if (!p.requires_grad()) continue;
    const size_t size = static_cast<size_t>(p.numel()) * p.element_size();
    const size_t limit = buckets.size() <= 1 ? first_bytes : bytes;
    const bool fits = last != nullptr && last->scalar_type() == p.scalar_type() &&
                      last->device() == p.device() && buckets.back().bytes + size <= limit;
    if (!fits) buckets.emplace_back();
    GradBucket& b = buckets.back();
    b.params.push_back(k);
    b.offsets.push_back(b.grad_elements);
    b.grad_elements += p.numel();
    b.bytes += size;
    last = &p;
  }
  for (GradBucket& b : buckets) {
    const at::Tensor& p = params[b.params.front()];
    b.buffer = at::empty({b.grad_elements + static_cast<int64_t>(b.params.size())},
                         p.options().requires_grad(false));
    b.tensors = {b.buffer};
  }
  return buckets;
}

}  // namespace ca::detail
