// SPDX-License-Identifier: BSD-3-Clause
// Builds without NCCL (a CPU libtorch, or no nccl.h found): the nccl backend is refused.
#include "ca/error.h"
#include "distributed/backend_factory.h"

namespace ca::detail {

bool nccl_built() { return false; }

c10::intrusive_ptr<c10d::Backend> make_nccl(const c10::intrusive_ptr<c10d::Store>& /*store*/,
                                            const ProcessGroupOptions& /*o*/) {
  throw Error(
      "backend nccl: this ca-replay was built without NCCL (it needs a CUDA libtorch "
      "and the nccl.h of the nvidia-nccl package); use gloo");
}

}  // namespace ca::detail
