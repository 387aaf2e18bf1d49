// SPDX-License-Identifier: BSD-3-Clause
// NCCL, built against a CUDA libtorch with the nccl.h of its nvidia-nccl package.
#include <c10/cuda/CUDAFunctions.h>

#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include "distributed/backend_factory.h"

namespace ca::detail {

bool nccl_built() { return true; }

c10::intrusive_ptr<c10d::Backend> make_nccl(const c10::intrusive_ptr<c10d::Store>& store,
                                            const ProcessGroupOptions& o) {
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(o.local_rank));
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = o.timeout;
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, o.rank, o.world_size, options);
}

}  // namespace ca::detail
