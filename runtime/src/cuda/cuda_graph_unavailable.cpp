// SPDX-License-Identifier: BSD-3-Clause
// CUDA-graph replay in a build whose libtorch has no CUDA (or with CA_ENABLE_CUDA=OFF).
#include "ca/error.h"
#include "cuda/cuda_graph_replay.h"

namespace ca::detail {

// The seam's signature: the CUDA build moves the two by-value parameters into the replay.
// NOLINTBEGIN(performance-unnecessary-value-param)
std::unique_ptr<CudaGraphReplay> make_cuda_graph_replay(const Graph&, const DevicePlacement&,
                                                        std::vector<size_t>, PlainRun) {
  throw Error("CUDA-graph replay is not available: this runtime was built without CUDA");
}
// NOLINTEND(performance-unnecessary-value-param)

}  // namespace ca::detail
