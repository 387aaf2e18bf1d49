// SPDX-License-Identifier: BSD-3-Clause
// CUDA-graph replay in a build whose libtorch has no CUDA (or with CA_ENABLE_CUDA=OFF).
#include "ca/error.h"
#include "cuda/cuda_graph_replay.h"

namespace ca::detail {

std::unique_ptr<CudaGraphReplay> make_cuda_graph_replay(const Graph&, const DevicePlacement&,
                                                        std::vector<size_t>, PlainRun) {
  throw Error("CUDA-graph replay is not available: this runtime was built without CUDA");
}

}  // namespace ca::detail
